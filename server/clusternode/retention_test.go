package clusternode

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// TestRetentionAcrossNodes pins doc.go's "Retention": a partition's
// leader deletes its old sealed segments by its topic's retention.bytes,
// its followers take the same log start at once (no write needed), the
// journal names what each node deleted, a read below the start through
// any node is out of range, and a follower that was stopped meanwhile
// starts again at the leader's start when it returns.
func TestRetentionAcrossNodes(t *testing.T) {
	c := newTestCluster(t, 3)
	const name = "metrics"
	p := 0
	require.NoError(t, c.node(1).CreateTopicWithConfig(name, 1, 3,
		map[string]string{"segment.bytes": "1024", "retention.bytes": "2048", "retention.ms": "-1"}))
	waitFor(t, waitLong, "every node knows the topic", func() (bool, string) {
		for _, n := range c.running() {
			if _, err := n.Topic(name); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	})
	pm := partitionOf(t, c.node(1), name, p)
	leader := pm.Leader
	var victim int
	for _, id := range pm.Replicas {
		if id != leader && (victim == 0 || id != c.controller()) {
			victim = id
		}
	}
	send := func(from, n int) {
		for i := from; i < from+n; i++ {
			_, err := c.node(leader).Send(name, &p, []topic.Message{{Payload: fmt.Appendf(nil, "%0100d", i)}})
			require.NoError(t, err)
		}
	}
	send(0, 60)

	res, err := c.node(leader).EnforceRetention(t.Context())
	require.NoError(t, err)
	require.Len(t, res, 1)
	start := res[0].To
	require.Greater(t, start, uint64(0))
	for _, id := range pm.Replicas {
		waitFor(t, waitLong, fmt.Sprintf("broker %d at log start %d", id, start), func() (bool, string) {
			l, err := c.node(id).broker.Replica(name, p, false)
			if err != nil {
				return false, err.Error()
			}
			return l.LogStart() == start, fmt.Sprintf("log start %d", l.LogStart())
		})
	}
	waitFor(t, waitLong, "every node journalled its deletion", func() (bool, string) {
		entries, err := c.node(1).Journal(0, 1000)
		if err != nil {
			return false, err.Error()
		}
		seen := map[int]bool{}
		intents := map[uint64]bool{}
		leaderDone := false
		for _, e := range entries {
			if e.Event != cluster.EventRetention || e.By != cluster.ByRetention {
				continue
			}
			if e.Phase == cluster.PhaseIntent {
				intents[e.Offset] = true
			}
			if e.Broker == leader && e.Phase == cluster.PhaseDone {
				// The leader's deletion names its intent, committed before.
				leaderDone = e.Intent != nil && intents[*e.Intent]
			}
			for _, r := range e.Removed {
				seen[r.Broker] = true
			}
		}
		return len(seen) == 3 && leaderDone, fmt.Sprintf("%v, leader's outcome after its intent: %v", seen, leaderDone)
	})
	for _, n := range c.running() {
		_, err := n.ReadCommitted(name, p, 0, 10)
		var oor *client.OffsetOutOfRangeError
		require.ErrorAs(t, err, &oor, "through node %d", n.ID())
		require.Equal(t, start, oor.LogStart)
	}

	// A follower stopped now misses the next deletion: when it returns
	// its log ends below the leader's start, and it starts again there.
	c.stop(victim)
	waitFor(t, testFailoverAfter+failoverMargin, fmt.Sprintf("broker %d out of the active set", victim), func() (bool, string) {
		pm := partitionOf(t, c.node(leader), name, p)
		return !slices.Contains(pm.Active, victim), fmt.Sprintf("%+v", pm)
	})
	send(60, 60)
	res, err = c.node(leader).EnforceRetention(t.Context())
	require.NoError(t, err)
	require.Len(t, res, 1)
	start = res[0].To
	c.restart(victim)
	waitFor(t, waitLong, fmt.Sprintf("broker %d back in the active set", victim), func() (bool, string) {
		st, err := c.node(leader).Status(name, p)
		return err == nil && slices.Contains(st.Active, victim), fmt.Sprintf("%+v %v", st, err)
	})
	l, err := c.node(victim).broker.Replica(name, p, false)
	require.NoError(t, err)
	require.Equal(t, start, l.LogStart())
	got := c.replicaLog(victim, name, p)
	require.Equal(t, uint64(120)-start, uint64(len(got)), "the returned follower holds the leader's records from its start")
	require.Equal(t, start, got[0].Offset)
}
