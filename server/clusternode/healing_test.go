package clusternode_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
)

// healingEntries are node via's journal entries of event healing.
func healingEntries(t *testing.T, c *clustertest.Cluster, via int) []cluster.JournalEntry {
	t.Helper()
	return slices.DeleteFunc(journal(t, c, via), func(e cluster.JournalEntry) bool { return e.Event != cluster.EventHealing })
}

// healingIs reports whether node id's copy of the metadata has automatic
// healing on or off, and its controller follows it: the failover delay
// after when on, manual mode (zero) when off.
func healingIs(c *clustertest.Cluster, id int, on bool, after time.Duration) error {
	want := time.Duration(0)
	if on {
		want = after
	}
	n := c.Node(id)
	got, d := n.AutomaticHealing()
	if ctl := clusternode.ControllerFailoverAfter(n); got != on || d != want || ctl != want {
		return fmt.Errorf("node %d: automatic %v after %v, its controller after %v", id, got, d, ctl)
	}
	return nil
}

// awaitHealing waits until every running node has healing on or off
// (healingIs).
func awaitHealing(c *clustertest.Cluster, on bool, after time.Duration) {
	c.Await(fmt.Sprintf("automatic healing %v on every node", on), func() (bool, string) {
		for _, id := range c.Running() {
			if err := healingIs(c, id, on, after); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	})
}

// TestHealingSwitchReplicated pins healing.go and
// docs/phase-7-processes.md § Switching automatic healing: the switch is
// a fact of the replicated metadata. Switched off through a follower of
// the metadata group, the proposal reaches the leader and every node
// applies it, journaled once as the operator's healing entry with the
// reason; switched off again through the leader, it changes and journals
// nothing. A restart of every node keeps it (a node is ready only once
// its copy has replayed it), and so does a change of leader: the new
// leader's controller fails nothing over and deactivates no one while a
// broker stays silent for several failover delays, and the survivors'
// heartbeats still reach it (the switch stops no heartbeat). Switched on
// again, the controller fails the silent broker's partitions over. With
// no majority, a switch is an error, even to what the node's copy says
// already: it is proposed, never answered from a copy that may be behind.
func TestHealingSwitchReplicated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const after = 500 * time.Millisecond
		const name = "orders"
		c := start(t, 3, clustertest.Options{FailoverAfter: after})
		ctx := t.Context()
		leader := c.Controller()
		follower := others(c, leader)[0]

		changed, err := c.Node(follower).SetAutomaticHealing(ctx, false, "maintenance window")
		require.NoError(t, err)
		require.True(t, changed)
		require.NoError(t, healingIs(c, follower, false, after), "applied on the node that was asked before it answers")
		awaitHealing(c, false, after)
		for _, id := range c.IDs() {
			hs := healingEntries(t, c, id)
			require.Len(t, hs, 1, "node %d", id)
			require.Equal(t, cluster.ByOperator, hs[0].By)
			require.Equal(t, "maintenance window", hs[0].Reason)
			require.NotNil(t, hs[0].Automatic)
			require.False(t, *hs[0].Automatic)
		}
		changed, err = c.Node(leader).SetAutomaticHealing(ctx, false, "again")
		require.NoError(t, err)
		require.False(t, changed, "already off")
		require.Len(t, healingEntries(t, c, leader), 1, "nothing journaled")
		// Created with healing off, its leaders stay where placement put
		// them, one per broker, until this test stops one.
		require.NoError(t, c.Via(follower).CreateTopic(name, 3, 3))

		// A restart of every node: the switch is in the Raft log or a
		// snapshot, and replayed before a node is ready.
		c.Close()
		for _, id := range c.IDs() {
			c.Restart(id)
		}
		c.AwaitReady()
		for _, id := range c.IDs() {
			require.NoError(t, healingIs(c, id, false, after), "after the restart")
		}

		// A change of leader: stop the metadata leader, which leads one of
		// the partitions too (3 partitions over 3 brokers).
		old := c.Controller()
		survivors := others(c, old)
		led := map[int]cluster.PartitionStatus{}
		for p := range 3 {
			if st := statusVia(t, c, old, name, p); st.Leader == old {
				led[p] = st
			}
		}
		require.NotEmpty(t, led, "broker %d leads a partition", old)
		c.Stop(old)
		c.Await("a new metadata leader", func() (bool, string) {
			ctl := c.Controller()
			return ctl != 0 && ctl != old, fmt.Sprintf("leader %d", ctl)
		})
		now := c.Controller()
		awaitHealing(c, false, after)
		time.Sleep(10 * after) // several failover delays, in the bubble's fake time
		for _, id := range survivors {
			for p, before := range led {
				st := statusVia(t, c, id, name, p)
				require.Equal(t, old, st.Leader, "node %d: %s/%d failed over with automatic healing off", id, name, p)
				require.Equal(t, before.LeaderEpoch, st.LeaderEpoch)
				require.Equal(t, before.Active, st.Active, "node %d: %s/%d: no one deactivated with automatic healing off", id, name, p)
			}
		}
		for _, id := range survivors {
			for _, b := range c.Via(id).Brokers() {
				require.Equal(t, b.ID != old, b.Available, "through node %d, with healing off: the survivors' heartbeats reach the new leader %d: %+v", id, now, b)
			}
		}

		other := others(c, old, now)[0]
		changed, err = c.Node(other).SetAutomaticHealing(ctx, true, "maintenance over")
		require.NoError(t, err)
		require.True(t, changed)
		switchedOn := time.Now()
		awaitHealing(c, true, after)
		for p, before := range led {
			awaitEvery(c, fmt.Sprintf("%s/%d failed over", name, p), survivors, name, p, func(st cluster.PartitionStatus) error {
				if st.Leader == old || st.LeaderEpoch != before.LeaderEpoch+1 || slices.Contains(st.Active, old) {
					return fmt.Errorf("leader %d epoch %d active %v", st.Leader, st.LeaderEpoch, st.Active)
				}
				return nil
			})
		}
		require.LessOrEqual(t, time.Since(switchedOn), 2*after, "switched on, the controller acts within its failover delay")
		hs := healingEntries(t, c, now)
		require.Len(t, hs, 2)
		require.True(t, *hs[1].Automatic)
		require.Equal(t, "maintenance over", hs[1].Reason)

		c.Stop(now)
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err = c.Node(other).SetAutomaticHealing(short, true, "no majority")
		require.ErrorIs(t, err, clusternode.ErrNoLeader, "switched with no majority")
	})
}
