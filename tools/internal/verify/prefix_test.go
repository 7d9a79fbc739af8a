package verify

import (
	"slices"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/stretchr/testify/require"
)

func recs(payloads ...string) []log.Record { return recsFrom(0, payloads...) }

// recsFrom is the records of a log whose start is start.
func recsFrom(start uint64, payloads ...string) []log.Record {
	out := make([]log.Record, len(payloads))
	for i, p := range payloads {
		off := start + uint64(i)
		out[i] = log.Record{Offset: off, Timestamp: 1000 + int64(off), Payload: []byte(p)}
	}
	return out
}

// TestVerifyCompareAndJudge pins the replica rule of
// docs/phase-4-replication.md § Catch-up: a follower must be an exact prefix
// of its leader, compared on offset, timestamp and payload; short is lag, a
// difference or records past the leader's end is divergence, and an inactive
// follower's divergence is expected. Replicas may start at different
// offsets (retention deletes a leader's old segments before its followers'
// go; a follower may be reset to its leader's log start): only the offsets
// both hold are compared.
func TestVerifyCompareAndJudge(t *testing.T) {
	changedTS := recs("a", "b")
	changedTS[1].Timestamp++
	tests := []struct {
		name     string
		leader   []log.Record
		follower []log.Record
		active   bool
		want     Status
		lag      uint64
		mismatch bool
		at       uint64
	}{
		{"equal", recs("a", "b"), recs("a", "b"), true, StatusOK, 0, false, 0},
		{"both empty", nil, nil, true, StatusOK, 0, false, 0},
		{"lag", recs("a", "b", "c"), recs("a"), true, StatusLag, 2, false, 0},
		{"empty follower lags", recs("a"), nil, true, StatusLag, 1, false, 0},
		{"payload differs", recs("a", "b"), recs("a", "x"), true, StatusDiverged, 0, true, 1},
		{"timestamp differs", recs("a", "b"), changedTS, true, StatusDiverged, 0, true, 1},
		{"first difference wins", recs("a", "b"), recs("x", "y"), true, StatusDiverged, 0, true, 0},
		{"follower ahead", recs("a"), recs("a", "b"), true, StatusDiverged, 0, false, 0},
		{"inactive ahead", recs("a"), recs("a", "b"), false, StatusInactive, 0, false, 0},
		{"inactive differs", recs("a", "b"), recs("a", "x", "y"), false, StatusInactive, 0, true, 1},
		{"inactive lag", recs("a", "b"), recs("a"), false, StatusLag, 1, false, 0},
		{"follower reset to a later start", recs("a", "b", "c", "d"), recsFrom(2, "c", "d"), true, StatusOK, 0, false, 0},
		{"leader deleted its oldest records", recsFrom(2, "c", "d"), recs("a", "b", "c", "d"), true, StatusOK, 0, false, 0},
		{"below the shared range is not compared", recsFrom(2, "c", "d"), recs("x", "y", "c", "d"), true, StatusOK, 0, false, 0},
		{"differs in the shared range", recsFrom(2, "c", "d"), recs("a", "b", "c", "x"), true, StatusDiverged, 0, true, 3},
		{"later start lags", recsFrom(2, "c", "d", "e"), recsFrom(3, "d"), true, StatusLag, 1, false, 0},
		{"later start ahead", recsFrom(2, "c"), recsFrom(3, "d"), true, StatusDiverged, 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leader := Replica{Start: start(tt.leader), Records: slices.Values(tt.leader)}
			follower := Replica{Start: start(tt.follower), Records: slices.Values(tt.follower)}
			c := Compare(leader, follower)
			require.Equal(t, leader.Start+uint64(len(tt.leader)), c.LeaderEnd)
			require.Equal(t, follower.Start+uint64(len(tt.follower)), c.FollowerEnd)
			require.Equal(t, tt.mismatch, c.Mismatch)
			if tt.mismatch {
				require.Equal(t, tt.at, c.MismatchOffset)
			}
			status, lag, detail := Judge(c, 1, tt.active)
			require.Equal(t, tt.want, status, detail)
			require.Equal(t, tt.lag, lag)
			require.Equal(t, tt.want.Problem(), status == StatusDiverged)
		})
	}
}

// start is the log start of a table's records: its first offset, 0 for none.
func start(rs []log.Record) uint64 {
	if len(rs) == 0 {
		return 0
	}
	return rs[0].Offset
}

// TestVerifyCompareEmptyAtStart: a follower reset to its leader's log start
// and holding nothing yet ends at that start, not at 0: its lag counts only
// the records it lacks.
func TestVerifyCompareEmptyAtStart(t *testing.T) {
	leader := Replica{Start: 5, Records: slices.Values(recsFrom(5, "f", "g"))}
	c := Compare(leader, Replica{Start: 5, Records: slices.Values([]log.Record(nil))})
	status, lag, _ := Judge(c, 1, true)
	require.Equal(t, StatusLag, status)
	require.Equal(t, uint64(2), lag)
	c = Compare(leader, Replica{Start: 7, Records: slices.Values([]log.Record(nil))})
	status, _, detail := Judge(c, 1, true)
	require.Equal(t, StatusOK, status, detail)
}
