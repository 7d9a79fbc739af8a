package verify

import (
	"slices"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/stretchr/testify/require"
)

func recs(payloads ...string) []log.Record {
	out := make([]log.Record, len(payloads))
	for i, p := range payloads {
		out[i] = log.Record{Offset: uint64(i), Timestamp: 1000 + int64(i), Payload: []byte(p)}
	}
	return out
}

// TestVerifyCompareAndJudge pins the replica rule of
// docs/phase-4-replication.md § Catch-up: a follower must be an exact prefix
// of its leader, compared on offset, timestamp and payload; short is lag, a
// difference or records past the leader's end is divergence, and an inactive
// follower's divergence is expected.
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(slices.Values(tt.leader), slices.Values(tt.follower))
			require.Equal(t, uint64(len(tt.leader)), c.LeaderEnd)
			require.Equal(t, uint64(len(tt.follower)), c.FollowerEnd)
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
