package clusternode

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// TestRemovalOnlyThroughRaft pins leader.go's rule
// (docs/phase-7-processes.md): a leader stops waiting for a follower only
// once that follower's removal from the active set is committed and
// applied — never on its own. While a stopped follower is still active, a
// write is not acknowledged (a *cluster.ReplicationError, or no answer
// yet); once the controller has committed its removal, writes are
// acknowledged by the replicas left, and each answer names only them.
func TestRemovalOnlyThroughRaft(t *testing.T) {
	c := newTestCluster(t, 3)
	const name = "removal"
	c.createTopic(c.follower(), name, 1, 3)
	pm := partitionOf(t, c.node(1), name, 0)
	leader := c.node(pm.Leader)
	// A follower that does not lead the metadata group, so that the
	// controller keeps running while it is stopped.
	victim := 0
	for _, id := range pm.Followers() {
		if id != c.controller() {
			victim = id
			break
		}
	}
	require.NotZero(t, victim)
	p := 0
	_, err := leader.Send(name, &p, []topic.Message{{Payload: []byte("before")}})
	require.NoError(t, err)

	c.stop(victim)
	// Until the removal is applied on the leader, nothing is acknowledged.
	res, err := leader.Send(name, &p, []topic.Message{{Payload: []byte("while active")}})
	if err == nil {
		now := partitionOf(t, leader, name, 0)
		require.NotContains(t, now.Active, victim, "acknowledged %+v while broker %d was still active", res, victim)
		require.NotContains(t, res[0].Brokers, victim)
	} else {
		var repl *cluster.ReplicationError
		require.True(t, errors.As(err, &repl), "want a *cluster.ReplicationError, got %v", err)
		// Refused for the stopped follower alone. (Whether it is still
		// active now is not asked: the controller may remove it while
		// the send waits for it.)
		require.Equal(t, []int{victim}, repl.BrokerIDs)
	}

	waitFor(t, testFailoverAfter+failoverMargin, fmt.Sprintf("broker %d out of the active set", victim), func() (bool, string) {
		now := partitionOf(t, leader, name, 0)
		return !slices.Contains(now.Active, victim), fmt.Sprintf("active %v", now.Active)
	})
	res, err = leader.Send(name, &p, []topic.Message{{Payload: []byte("after removal")}})
	require.NoError(t, err)
	require.NotContains(t, res[0].Brokers, victim)
	require.Equal(t, partitionOf(t, leader, name, 0).Active, res[0].Brokers)
}
