package clusternode

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
	"github.com/pystream/pystream/topic"
)

// TestFencingReplicate pins follower.go's rules for the internal API's
// Replicate, called directly on a follower as a leader's request would
// reach it: a follower takes records only from the leader its metadata
// names, at the epoch its metadata holds — an older epoch is refused
// (CodeStaleEpoch: the sender was replaced, it is fenced), a newer one is
// waited for briefly (CodeEpochAhead); records must follow on from its log
// end (CodeBehind with End); a retry of records it holds is accepted
// without duplicates, and other records at those offsets are refused
// (CodeDiverged). No refusal changes the follower's log.
func TestFencingReplicate(t *testing.T) {
	c := newTestCluster(t, 3)
	const name = "fence"
	c.createTopic(c.node(1), name, 1, 3)
	p := 0
	for i := range 3 {
		_, err := c.node(i+1).Send(name, &p, []topic.Message{{Payload: fmt.Appendf(nil, "epoch 0 #%d", i)}})
		require.NoError(t, err)
	}

	// Move the leadership to another replica, as an operator would: the
	// partition moves to epoch 1 and its first leader is replaced.
	pm0 := partitionOf(t, c.node(1), name, p)
	require.Equal(t, uint64(0), pm0.LeaderEpoch)
	old := pm0.Leader
	followers := slices.DeleteFunc(slices.Clone(pm0.Replicas), func(id int) bool { return id == old })
	slices.Sort(followers)
	leader, follower := followers[0], followers[1]
	_, err := c.node(old).propose(t.Context(), cluster.MetaCommand{Op: cluster.OpMoveLeader, Topic: name, Partition: p,
		Broker: leader, Epoch: pm0.LeaderEpoch})
	require.NoError(t, err)
	waitFor(t, waitLong, "every node at epoch 1", func() (bool, string) {
		for _, n := range c.running() {
			if pm := partitionOf(t, n, name, p); pm.LeaderEpoch != 1 || pm.Leader != leader {
				return false, fmt.Sprintf("node %d: %+v", n.ID(), pm)
			}
		}
		return true, ""
	})
	for i := range 2 {
		res, err := c.node(follower).Send(name, &p, []topic.Message{{Payload: fmt.Appendf(nil, "epoch 1 #%d", i)}})
		require.NoError(t, err)
		require.Equal(t, leader, res[0].LeaderBrokerID)
		require.Equal(t, []int{1, 2, 3}, res[0].Brokers)
	}
	held := c.replicaLog(follower, name, p)
	require.Len(t, held, 5)
	sameRecords(t, readAll(t, c.node(1), name, p), held)
	f := c.node(follower)
	next := func(payload string) []log.Record {
		return []log.Record{{Offset: 5, Timestamp: time.Now().UnixNano(), Payload: []byte(payload)}}
	}
	refused := func(t *testing.T, req replication.ReplicateRequest, code string) *replication.Error {
		t.Helper()
		_, err := f.Replicate(t.Context(), req)
		var re *replication.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, code, re.Code, "%v", err)
		sameRecords(t, held, scanLog(t, cluster.ReplicaDir(c.nodes[follower].dir, follower, name, p)), "a refused request leaves the follower's log as it was")
		return re
	}

	t.Run("stale epoch", func(t *testing.T) {
		// The replaced leader, still believing it leads epoch 0.
		re := refused(t, replication.ReplicateRequest{Topic: name, Partition: p, Epoch: 0, Leader: old, HighWatermark: 6,
			Records: next("from the fenced leader")}, replication.CodeStaleEpoch)
		require.Equal(t, uint64(1), re.Epoch, "the refusal names the follower's epoch")
	})
	t.Run("not the leader", func(t *testing.T) {
		// The current epoch, from a broker that does not lead it.
		refused(t, replication.ReplicateRequest{Topic: name, Partition: p, Epoch: 1, Leader: old, HighWatermark: 6,
			Records: next("from a broker that does not lead")}, replication.CodeStaleEpoch)
		// And the leader takes no records from anyone.
		_, err := c.node(leader).Replicate(t.Context(), replication.ReplicateRequest{Topic: name, Partition: p, Epoch: 1, Leader: follower,
			Records: next("to the leader")})
		require.Equal(t, replication.CodeStaleEpoch, replication.CodeOf(err), "%v", err)
		require.Len(t, scanLog(t, cluster.ReplicaDir(c.nodes[leader].dir, leader, name, p)), 5)
	})
	t.Run("epoch ahead", func(t *testing.T) {
		refused(t, replication.ReplicateRequest{Topic: name, Partition: p, Epoch: 2, Leader: leader,
			Records: next("from an epoch not yet applied")}, replication.CodeEpochAhead)
	})
	t.Run("skips ahead", func(t *testing.T) {
		re := refused(t, replication.ReplicateRequest{Topic: name, Partition: p, Epoch: 1, Leader: leader,
			Records: []log.Record{{Offset: 7, Timestamp: time.Now().UnixNano(), Payload: []byte("a gap before me")}}}, replication.CodeBehind)
		require.Equal(t, uint64(5), re.End, "the refusal says where the follower's log ends")
	})
	t.Run("retry", func(t *testing.T) {
		res, err := f.Replicate(t.Context(), replication.ReplicateRequest{Topic: name, Partition: p, Epoch: 1, Leader: leader,
			HighWatermark: 5, Records: held[3:]})
		require.NoError(t, err)
		require.Equal(t, uint64(5), res.End)
		sameRecords(t, held, scanLog(t, cluster.ReplicaDir(c.nodes[follower].dir, follower, name, p)), "a retry adds nothing")
		// A probe (no records) answers the log end.
		res, err = f.Replicate(t.Context(), replication.ReplicateRequest{Topic: name, Partition: p, Epoch: 1, Leader: leader, HighWatermark: 5})
		require.NoError(t, err)
		require.Equal(t, uint64(5), res.End)
	})
	t.Run("diverged", func(t *testing.T) {
		other := []log.Record{{Offset: 3, Timestamp: held[3].Timestamp, Payload: []byte("not what offset 3 holds")}, held[4]}
		re := refused(t, replication.ReplicateRequest{Topic: name, Partition: p, Epoch: 1, Leader: leader, HighWatermark: 5,
			Records: other}, replication.CodeDiverged)
		require.Equal(t, uint64(5), re.End)
	})
}
