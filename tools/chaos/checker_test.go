package chaos

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cleanHistory is a small run that broke nothing: two partitions of five
// records, read during the run through two nodes, seen the same by three
// nodes' APIs and replica files, a group that committed forward, and one
// unknown write that made it in, one that did not, and an unknown write
// its producer sent again, in twice.
func cleanHistory() *History {
	t0 := time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC)
	h := &History{Seed: 1, Mode: "cluster", Topic: "chaos", Partitions: 2, Start: t0}
	logs := map[int][]string{
		0: {"h1-1", "h1-2", "k1-1", "k1-1", "h1-3"},
		1: {"h2-1", "h2-2", "h2-3", "u-in", "h2-4"},
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	for p, vals := range logs {
		for o, v := range vals {
			if v == "u-in" || (v == "k1-1" && o == 3) {
				continue
			}
			outcome := Acked
			if v == "k1-1" {
				outcome = Unknown
			}
			h.Writes = append(h.Writes, Write{Value: v, Producer: strings.SplitN(v, "-", 2)[0],
				Partition: p, Offset: uint64(o), Outcome: outcome, Start: at(o), End: at(o)})
			h.Reads = append(h.Reads, Read{Via: 1 + o%2, Partition: p, Offset: uint64(o), Value: v, At: at(o + 1)})
		}
	}
	h.Writes = append(h.Writes,
		Write{Value: "u-in", Producer: "h2", Partition: 1, Outcome: Unknown, Start: at(3), End: at(4)},
		Write{Value: "u-out", Producer: "h2", Partition: 1, Outcome: Unknown, Start: at(3), End: at(4)},
		Write{Value: "f-1", Producer: "h1", Partition: 0, Outcome: Failed, Start: at(3), End: at(4)})
	for node := 1; node <= 3; node++ {
		for _, src := range []string{"api", "replica"} {
			for p := range 2 {
				f := FinalLog{Source: fmt.Sprintf("%s node %d", src, node), Partition: p}
				for o, v := range logs[p] {
					f.Entries = append(f.Entries, Entry{Offset: uint64(o), Value: v})
				}
				h.Final = append(h.Final, f)
			}
		}
	}
	h.FinalHighWatermarks = []uint64{5, 5}
	for i, o := range []uint64{1, 3, 5} {
		h.Commits = append(h.Commits,
			Commit{Group: "g", Partition: 0, Kind: CommitAcked, Offset: o, HighWatermark: 5, At: at(5 + i)},
			Commit{Group: "g", Partition: 0, Kind: CommitObserved, Offset: o, At: at(5 + i)})
	}
	h.Faults = []Fault{{Kind: "kill", Victim: 1, Injected: at(2), Healed: at(3), Healthy: at(4), Failover: 900 * time.Millisecond}}
	return h
}

// TestCheckerCleanHistory: a history that broke nothing has no violation,
// and the second copy of the unknown write sent again is counted as a
// duplicate.
func TestCheckerCleanHistory(t *testing.T) {
	r := Check(cleanHistory())
	require.Empty(t, r.Violations)
	require.Equal(t, 1, r.Duplicates)
	require.Equal(t, 2, r.UnknownPresent)
	require.Equal(t, 3, r.Unknown)
	require.Equal(t, 1, r.Failed)
	require.Equal(t, 10, r.Records)
}

// TestCheckerPlantedFaults proves the checker can fail: each fault planted
// in a clean history is reported, with its kind
// (docs/chaos.md § The checks).
func TestCheckerPlantedFaults(t *testing.T) {
	setFinal := func(h *History, p int, mutate func([]Entry) []Entry) {
		for i := range h.Final {
			if h.Final[i].Partition == p {
				h.Final[i].Entries = mutate(append([]Entry(nil), h.Final[i].Entries...))
			}
		}
	}
	cases := []struct {
		name  string
		kind  string
		plant func(h *History)
	}{
		{"lost ack", VLostAck, func(h *History) {
			h.Writes = append(h.Writes, Write{Value: "h9-1", Producer: "h9", Partition: 1, Offset: 5, Outcome: Acked})
		}},
		{"moved offset", VMovedAck, func(h *History) { h.Writes[0].Offset = 4 }},
		{"duplicate of a value sent once", VDuplicateAck, func(h *History) {
			setFinal(h, 1, func(es []Entry) []Entry { return append(es, Entry{Offset: 5, Value: "h2-1"}) })
			h.FinalHighWatermarks[1] = 6
		}},
		{"duplicate of an idempotent producer's unacknowledged value", VDuplicateAck, func(h *History) {
			h.Writes = append(h.Writes, Write{Value: "i1-1", Producer: "i1", Idempotent: true, Partition: 1, Outcome: Unknown})
			setFinal(h, 1, func(es []Entry) []Entry {
				return append(es, Entry{Offset: 5, Value: "i1-1"}, Entry{Offset: 6, Value: "i1-1"})
			})
			h.FinalHighWatermarks[1] = 7
		}},
		{"phantom value", VPhantom, func(h *History) {
			setFinal(h, 1, func(es []Entry) []Entry { return append(es, Entry{Offset: 5, Value: "never-sent"}) })
			h.FinalHighWatermarks[1] = 6
		}},
		{"gap", VGap, func(h *History) {
			setFinal(h, 1, func(es []Entry) []Entry { return append(es, Entry{Offset: 6, Value: "u-out"}) })
		}},
		{"short of the high watermark", VGap, func(h *History) { h.FinalHighWatermarks[0] = 7 }},
		{"divergent node", VDivergent, func(h *History) {
			h.Final[len(h.Final)-1].Entries = append([]Entry(nil), h.Final[len(h.Final)-1].Entries...)
			h.Final[len(h.Final)-1].Entries[4].Value = "u-out"
		}},
		{"rewritten read", VRewritten, func(h *History) { h.Reads[2].Value = "u-out" }},
		{"read past the final log", VRewritten, func(h *History) {
			h.Reads = append(h.Reads, Read{Via: 2, Partition: 0, Offset: 9, Value: "u-out"})
		}},
		{"backward commit", VCommitBackwards, func(h *History) {
			h.Commits = append(h.Commits, Commit{Group: "g", Partition: 0, Kind: CommitObserved, Offset: 2})
		}},
		{"commit above the high watermark", VCommitAboveHW, func(h *History) {
			h.Commits = append(h.Commits, Commit{Group: "g", Partition: 0, Kind: CommitAcked, Offset: 6, HighWatermark: 6})
		}},
		{"problem", VProblem, func(h *History) { h.AddProblem("log verify refused node 2's replica") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := cleanHistory()
			tc.plant(h)
			r := Check(h)
			require.NotEmpty(t, r.Violations)
			require.Contains(t, r.Kinds(), tc.kind, "violations: %v", r.Violations)
		})
	}
}

// TestCheckerUnknownCommitRaisesNothing: a commit without an answer may
// not have happened, so reading back the offset before it is no
// violation.
func TestCheckerUnknownCommitRaisesNothing(t *testing.T) {
	h := cleanHistory()
	h.Commits = append(h.Commits,
		Commit{Group: "g", Partition: 1, Kind: CommitAcked, Offset: 2},
		Commit{Group: "g", Partition: 1, Kind: CommitUnknown, Offset: 4},
		Commit{Group: "g", Partition: 1, Kind: CommitObserved, Offset: 2})
	require.Empty(t, Check(h).Violations)
}

// TestCheckerHistoryRoundTrip: the evidence a run keeps checks the same
// once loaded.
func TestCheckerHistoryRoundTrip(t *testing.T) {
	h := cleanHistory()
	h.Reads[0].Value = "u-out"
	path := filepath.Join(t.TempDir(), "history.json")
	require.NoError(t, h.Save(path))
	back, err := LoadHistory(path)
	require.NoError(t, err)
	require.Equal(t, Check(h).Kinds(), Check(back).Kinds())
}

// TestTableRows: the table counts each fault kind's faults, the writes
// made while they were in force, violations in their window, and the
// failover times.
func TestTableRows(t *testing.T) {
	h := cleanHistory()
	h.Reads[0].Value = "u-out" // read at t0+1s: outside the fault
	h.Reads[2].Value = "u-out" // read at t0+2s: inside
	h.AddProblemAt(h.Faults[0].Injected, "node 1 did not stop")
	h.AddProblem("after the run")
	rows := Table(h, Check(h), []string{"kill", "pause"})
	require.Len(t, rows, 3)
	kill := rows[0]
	require.Equal(t, 1, kill.Faults)
	require.Equal(t, 2, kill.Violations, "the read and the problem at the fault")
	require.Equal(t, 900*time.Millisecond, kill.P50())
	require.Equal(t, 900*time.Millisecond, kill.Max())
	require.Equal(t, 3, kill.Unknown, "u-in, u-out and the write sent again, all started in the fault")
	require.Equal(t, 0, rows[1].Faults)
	require.Equal(t, 4, rows[2].Violations)
	var buf bytes.Buffer
	require.NoError(t, PrintTable(&buf, rows))
	require.Contains(t, buf.String(), "0.90s")
}

// TestPercentile pins the nearest-rank percentiles of the table.
func TestPercentile(t *testing.T) {
	ds := []time.Duration{4, 1, 3, 2}
	require.Equal(t, time.Duration(2), percentile(ds, 50))
	require.Equal(t, time.Duration(4), percentile(ds, 100))
	require.Equal(t, time.Duration(0), percentile(nil, 50))
}
