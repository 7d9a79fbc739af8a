package clusternode_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
)

// TestFailoverControllerNodeStopped pins failover when the node that stops
// is also the controller (docs/phase-7-processes.md § Why processes, and
// § Failure detection): the survivors elect a new metadata leader, whose
// controller counts the old controller's silence from the last answer it
// had from it — not from its own election, which would add the
// election's time to the failover — and, once the failover delay has
// passed since then and not before, fails every partition it led over to an
// active follower at the next epoch (journaled with the candidates it
// compared, the winner first) and takes it out of every active set. Writes
// through every survivor go on, acknowledged by the survivors, and every
// acknowledged record stays readable at its offset. Back on its data
// directory, the stopped broker rejoins every active set as a follower
// and its replica logs equal its leaders'.
func TestFailoverControllerNodeStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "ledger"
		const partitions = 3
		c := start(t, 3, clustertest.Options{})
		victim := c.Controller()
		survivors := others(c, victim)
		require.NoError(t, c.Via(survivors[0]).CreateTopic(name, partitions, 3))
		acked := map[int][]log.Record{}
		for i, via := range c.IDs() {
			for p := range partitions {
				recs, _ := send(t, c, via, name, p, fmt.Sprintf("before #%d", i))
				acked[p] = append(acked[p], recs...)
			}
		}
		q := ledBy(t, c, victim, name, partitions, victim)
		before := statusVia(t, c, victim, name, q)

		c.Stop(victim)
		stopped := time.Now()
		c.Await("a new controller", func() (bool, string) {
			ctl := c.Controller()
			return ctl != 0 && ctl != victim, fmt.Sprintf("controller %d", ctl)
		})
		elected := time.Now()
		for p := range partitions {
			awaitEvery(c, fmt.Sprintf("broker %d out of %s/%d", victim, name, p), survivors, name, p, func(st cluster.PartitionStatus) error {
				if st.Leader == victim || slices.Contains(st.Active, victim) || !slices.Equal(st.Active, survivors) {
					return fmt.Errorf("leader %d epoch %d active %v", st.Leader, st.LeaderEpoch, st.Active)
				}
				return nil
			})
		}
		failedOver := time.Now()
		// Await looks every 10 ms of fake time, a controller starts at
		// most a tick of its loop after its election, and the old
		// controller's last answer came up to a heartbeat interval before
		// it stopped: the margins below.
		took := failedOver.Sub(stopped)
		every := clusternode.HeartbeatInterval(clustertest.DefaultFailoverAfter)
		t.Logf("stopped, elected after %v, failed over %v after the stop", elected.Sub(stopped), took)
		require.GreaterOrEqual(t, took, clustertest.DefaultFailoverAfter-every-100*time.Millisecond,
			"no failover before the delay has passed since the old controller last answered")
		require.LessOrEqual(t, took, max(clustertest.DefaultFailoverAfter, elected.Sub(stopped)+3*every)+200*time.Millisecond,
			"the new controller counts the silence from the old controller's last answer, not from its own election")
		after := statusVia(t, c, survivors[0], name, q)
		require.Equal(t, before.LeaderEpoch+1, after.LeaderEpoch)
		require.Contains(t, survivors, after.Leader)

		entries := journal(t, c, survivors[0])
		i := slices.IndexFunc(entries, func(e cluster.JournalEntry) bool {
			return e.Event == cluster.EventFailover && e.Phase == cluster.PhaseDone && e.By == cluster.ByController && e.Topic == name && e.Partition == q
		})
		require.GreaterOrEqual(t, i, 0, "the journal records the new controller's failover: %v", entries)
		fo := entries[i]
		require.Equal(t, victim, fo.Broker)
		require.NotEmpty(t, fo.Candidates, "the failover names the candidates it compared")
		require.Equal(t, after.Leader, fo.Candidates[0].Broker, "the winner first")

		for _, via := range survivors {
			for p := range partitions {
				recs, res := send(t, c, via, name, p, fmt.Sprintf("without %d via %d", victim, via))
				require.Equal(t, uint64(len(acked[p])), res[0].Offset, "%s/%d: the next offset", name, p)
				require.Equal(t, survivors, res[0].Brokers)
				acked[p] = append(acked[p], recs...)
			}
		}
		for _, via := range survivors {
			for p := range partitions {
				sameRecords(t, acked[p], readAll(t, c, via, name, p), "%s/%d through node %d", name, p, via)
			}
		}

		c.Restart(victim)
		for p := range partitions {
			awaitEvery(c, fmt.Sprintf("broker %d back in %s/%d", victim, name, p), c.IDs(), name, p, func(st cluster.PartitionStatus) error {
				if st.Leader == victim {
					return fmt.Errorf("led by broker %d again", victim)
				}
				return settled(st)
			})
		}
		for p := range partitions {
			recs, res := send(t, c, victim, name, p, "after the return")
			require.Equal(t, []int{1, 2, 3}, res[0].Brokers, "%s/%d: acknowledged by the returned broker too", name, p)
			acked[p] = append(acked[p], recs...)
			for _, id := range c.IDs() {
				sameRecords(t, acked[p], replicaRecords(t, c, id, name, p), "%s/%d: broker %d's replica", name, p, id)
			}
		}
	})
}
