package clusternode_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/clustertest"
)

// TestRetentionAcrossNodes pins doc.go's "Retention" between processes: a
// partition's leader decides alone, by its topic's retention.bytes,
// commits its intent to the journal through Raft and only then deletes,
// its outcome naming the intent; its followers take the same log start at
// once, with no write to carry it, and journal what they deleted. A
// follower stopped while the next pass runs comes back with a log that
// ends below its leader's new log start: it is reset, empty, at that
// start (journaled), copies from there, and rejoins the active set
// holding exactly its leader's records.
func TestRetentionAcrossNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "metrics"
		c := start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		require.NoError(t, c.Via(ctl).CreateTopicWithConfig(name, 1, 3,
			map[string]string{"segment.bytes": "1024", "retention.bytes": "2048", "retention.ms": "-1"}))
		st := statusVia(t, c, ctl, name, 0)
		leader := st.Leader
		victim := others(c, leader, ctl)[0] // a follower whose stop needs no election
		var acked []log.Record
		sendN := func(from, n int) {
			for i := from; i < from+n; i++ {
				recs, _ := send(t, c, leader, name, 0, fmt.Sprintf("%0100d", i))
				acked = append(acked, recs...)
			}
		}
		sendN(0, 60)

		res, err := c.Via(leader).EnforceRetention()
		require.NoError(t, err)
		require.Len(t, res, 1)
		first := res[0].To
		require.Positive(t, first)
		c.Await(fmt.Sprintf("every replica at log start %d", first), func() (bool, string) {
			for _, id := range c.IDs() {
				if ls := replicaLogStart(t, c, id, name, 0); ls != first {
					return false, fmt.Sprintf("broker %d at %d", id, ls)
				}
			}
			return true, ""
		})
		c.Await("every broker's deletion journaled, the leader's after its intent", func() (bool, string) {
			intents := map[uint64]bool{}
			removed := map[int]bool{}
			leaderDone := false
			for _, e := range journal(t, c, ctl) {
				if e.Event != cluster.EventRetention || e.By != cluster.ByRetention {
					continue
				}
				if e.Phase == cluster.PhaseIntent && e.Broker == leader {
					intents[e.Offset] = true
				}
				if e.Phase == cluster.PhaseDone && e.Broker == leader {
					leaderDone = e.Intent != nil && intents[*e.Intent]
				}
				for _, r := range e.Removed {
					removed[r.Broker] = true
				}
			}
			return len(removed) == 3 && leaderDone, fmt.Sprintf("removed on %v, the leader's outcome after its intent: %v", removed, leaderDone)
		})

		c.Stop(victim)
		awaitEvery(c, fmt.Sprintf("broker %d out of the active set", victim), c.Running(), name, 0, func(st cluster.PartitionStatus) error {
			if slices.Contains(st.Active, victim) {
				return fmt.Errorf("active %v", st.Active)
			}
			return nil
		})
		sendN(60, 60)
		res, err = c.Via(leader).EnforceRetention()
		require.NoError(t, err)
		require.Len(t, res, 1)
		second := res[0].To
		held := replicaRecords(t, c, victim, name, 0)
		require.Less(t, held[len(held)-1].Offset+1, second, "the stopped follower's log ends below the new log start")

		c.Restart(victim)
		awaitEvery(c, fmt.Sprintf("broker %d back in the active set, level", victim), c.IDs(), name, 0, func(st cluster.PartitionStatus) error {
			if st.HighWatermark != 120 {
				return fmt.Errorf("high watermark %d", st.HighWatermark)
			}
			return settled(st)
		})
		require.Equal(t, second, replicaLogStart(t, c, victim, name, 0))
		want := slices.DeleteFunc(slices.Clone(acked), func(r log.Record) bool { return r.Offset < second })
		sameRecords(t, want, replicaRecords(t, c, leader, name, 0), "the leader holds what retention kept")
		sameRecords(t, want, replicaRecords(t, c, victim, name, 0), "the returned follower holds its leader's records from its start")
		require.True(t, slices.ContainsFunc(journal(t, c, ctl), func(e cluster.JournalEntry) bool {
			return e.Broker == victim && e.Topic == name && strings.Contains(e.Summary, "reset to start there")
		}), "the reset is journaled")
	})
}
