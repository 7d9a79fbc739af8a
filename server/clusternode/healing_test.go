package clusternode

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
)

// healingEntries are node n's journal entries of event healing.
func healingEntries(t *testing.T, n *Node) []cluster.JournalEntry {
	t.Helper()
	entries, err := n.Journal(0, 0)
	require.NoError(t, err)
	return slices.DeleteFunc(entries, func(e cluster.JournalEntry) bool { return e.Event != cluster.EventHealing })
}

// waitHealing waits until every running node's copy of the metadata has
// automatic healing on or off, and its controller follows it: delay
// after when on, manual mode (zero) when off.
func (c *testCluster) waitHealing(on bool, after time.Duration) {
	c.t.Helper()
	want := time.Duration(0)
	if on {
		want = after
	}
	waitFor(c.t, waitLong, fmt.Sprintf("automatic healing %v on every node", on), func() (bool, string) {
		for _, n := range c.running() {
			got, d := n.AutomaticHealing()
			if got != on || d != want || n.ctrl.FailoverAfter() != want {
				return false, fmt.Sprintf("node %d: automatic %v after %v, its controller after %v", n.ID(), got, d, n.ctrl.FailoverAfter())
			}
		}
		return true, ""
	})
}

// leaderOtherThan waits until the running nodes agree on a metadata
// leader other than old (0: any) and returns its id.
func (c *testCluster) leaderOtherThan(old int) int {
	c.t.Helper()
	var id int
	waitFor(c.t, waitLong, "a metadata leader", func() (bool, string) {
		id = c.controller()
		return id != 0 && id != old, fmt.Sprintf("leader %d", id)
	})
	return id
}

// TestHealingSwitchReplicated pins healing.go: automatic healing switched
// at run time is a fact of the replicated metadata. Switched off through
// a follower, the proposal reaches the leader and every node applies it,
// journaled once as the operator's healing entry with the reason;
// switching it off again through the leader changes and journals nothing.
// A restart of every node keeps it, and so does a change of leader: the
// new leader's controller fails nothing over while a broker stays silent
// for several failover delays, and the survivors' heartbeats still reach
// it. Switched on again, the controller fails the silent broker's
// partitions over after the failover delay.
func TestHealingSwitchReplicated(t *testing.T) {
	const after = 500 * time.Millisecond
	c := newTestClusterFailingOverAfter(t, 3, after)
	const name = "orders"
	ctx := t.Context()

	changed, err := c.follower().SetAutomaticHealing(ctx, false, "maintenance window")
	require.NoError(t, err)
	require.True(t, changed)
	c.waitHealing(false, after)
	for _, n := range c.running() {
		hs := healingEntries(t, n)
		require.Len(t, hs, 1, "node %d", n.ID())
		require.Equal(t, cluster.ByOperator, hs[0].By)
		require.Equal(t, "maintenance window", hs[0].Reason)
		require.NotNil(t, hs[0].Automatic)
		require.False(t, *hs[0].Automatic)
	}
	leader := c.node(c.leaderOtherThan(0))
	changed, err = leader.SetAutomaticHealing(ctx, false, "again")
	require.NoError(t, err)
	require.False(t, changed, "already off")
	require.Len(t, healingEntries(t, leader), 1, "nothing journaled")
	// Created with healing off, its leaders stay where placement put them,
	// one per broker, until this test stops one.
	c.createTopic(c.follower(), name, 3, 3)

	// A restart of every node: the switch is in the snapshot or the log.
	for id := 1; id <= 3; id++ {
		c.stop(id)
	}
	for id := 1; id <= 3; id++ {
		c.restart(id)
	}
	c.waitRegistered()
	c.waitHealing(false, after)

	// A change of leader: stop the metadata leader, which leads one of the
	// partitions too (3 partitions over 3 brokers).
	old := c.leaderOtherThan(0)
	led := map[int]cluster.PartitionMetadata{}
	for p := range 3 {
		if pm := partitionOf(t, c.node(old), name, p); pm.Leader == old {
			led[p] = pm
		}
	}
	require.NotEmpty(t, led, "broker %d leads a partition", old)
	c.stop(old)
	now := c.node(c.leaderOtherThan(old))
	c.waitHealing(false, after)
	time.Sleep(3 * after) // several failover delays
	for _, n := range c.running() {
		for p, pm := range led {
			got := partitionOf(t, n, name, p)
			require.Equal(t, old, got.Leader, "node %d: %s/%d failed over with automatic healing off", n.ID(), name, p)
			require.Equal(t, pm.LeaderEpoch, got.LeaderEpoch)
		}
	}
	waitFor(t, waitLong, "the survivors' heartbeats reach the new leader with healing off", func() (bool, string) {
		up := map[int]bool{}
		for _, b := range (&controlView{n: now}).Brokers() {
			up[b.ID] = b.Available
		}
		for _, n := range c.running() {
			if !up[n.ID()] || up[old] {
				return false, fmt.Sprintf("available as leader %d sees them: %v", now.ID(), up)
			}
		}
		return true, ""
	})

	var follower *Node
	for _, n := range c.running() {
		if n != now {
			follower = n
		}
	}
	changed, err = follower.SetAutomaticHealing(ctx, true, "maintenance over")
	require.NoError(t, err)
	require.True(t, changed)
	c.waitHealing(true, after)
	waitFor(t, after+failoverMargin, "broker "+fmt.Sprint(old)+"'s partitions failed over", func() (bool, string) {
		for _, n := range c.running() {
			for p, pm := range led {
				if got := partitionOf(t, n, name, p); got.Leader == old || got.LeaderEpoch <= pm.LeaderEpoch {
					return false, fmt.Sprintf("node %d: %s/%d: %+v", n.ID(), name, p, got)
				}
			}
		}
		return true, ""
	})
	hs := healingEntries(t, now)
	require.Len(t, hs, 2)
	require.True(t, *hs[1].Automatic)
	require.Equal(t, "maintenance over", hs[1].Reason)

	// With no majority, a switch to what the node's copy says already is
	// an error too: it is proposed, never answered from a copy that may
	// be behind.
	c.stop(now.ID())
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = follower.SetAutomaticHealing(short, true, "no majority")
	require.Error(t, err, "switched with no majority")
}
