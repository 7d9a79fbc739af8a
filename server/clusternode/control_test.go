package clusternode

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/replication"
)

// controlNode is a Node with only what the controller's view reads: the
// metadata (three brokers, topic "t" with one partition over all three)
// and the heartbeats, on a fixed clock. No I/O.
func controlNode(t *testing.T, now time.Time) *Node {
	t.Helper()
	n := &Node{cfg: Config{ID: 1, FailoverAfter: testFailoverAfter}, fsm: newFSM(), now: func() time.Time { return now }}
	n.hbs = newHeartbeats(n)
	n.hbs.reset(now)
	cmds := []cluster.MetaCommand{
		{Op: cluster.OpRegisterNode, Node: &cluster.NodeInfo{ID: 1, Addr: "127.0.0.1:1"}},
		{Op: cluster.OpRegisterNode, Node: &cluster.NodeInfo{ID: 2, Addr: "127.0.0.1:2"}},
		{Op: cluster.OpRegisterNode, Node: &cluster.NodeInfo{ID: 3, Addr: "127.0.0.1:3"}},
		{Op: cluster.OpCreateTopic, Topic: "t", Partitions: 1, ReplicationFactor: 3},
	}
	for i, c := range cmds {
		c.Time = now
		b, err := cluster.EncodeMetaCommand(c)
		require.NoError(t, err)
		_, err = n.fsm.Apply(uint64(i+1), b)
		require.NoError(t, err)
	}
	return n
}

func report(id int, end uint64) replication.Heartbeat {
	return replication.Heartbeat{Node: id, Replicas: []replication.ReplicaReport{
		{Topic: "t", Partition: 0, LogEnd: &end, SyncedEpoch: 0, CaughtUp: true}}}
}

// TestControlStatusStaleHeartbeats pins capFollowers: heartbeats are
// snapshots of different moments, so an active follower that reported
// after a write while its leader reported before it must not look ahead
// of its leader — the planner deactivates a follower ahead of its leader,
// and deactivating every follower that way left a partition no failover
// candidate when its leader then stopped (TestFailoverLeaderCrash).
func TestControlStatusStaleHeartbeats(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	n := controlNode(t, now)
	pm := partitionOf(t, n, "t", 0)
	for _, id := range pm.Replicas {
		end := uint64(3) // the followers took the write...
		if id == pm.Leader {
			end = 2 // ...that the leader appended after its last report
		}
		n.hbs.record(report(id, end), now)
	}
	st, err := (&controlView{n: n}).Status("t", 0)
	require.NoError(t, err)
	pp := cluster.PlanPartition{Topic: "t", Partition: 0, Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, Preferred: st.Preferred}
	for _, rs := range st.Replicas {
		require.True(t, rs.Available)
		require.NotNil(t, rs.LogEnd)
		require.Equal(t, uint64(2), *rs.LogEnd, "broker %d: no active follower ahead of its leader's report", rs.BrokerID)
		pp.Replicas = append(pp.Replicas, cluster.PlanReplica{BrokerID: rs.BrokerID, Active: rs.Active, Available: rs.Available, LogEnd: rs.LogEnd})
	}
	var brokers []cluster.PlanBroker
	for _, id := range pm.Replicas {
		brokers = append(brokers, cluster.PlanBroker{ID: id, Available: true})
	}
	require.Empty(t, cluster.Plan(cluster.PlanInput{FailoverAfter: testFailoverAfter, Brokers: brokers, Partitions: []cluster.PlanPartition{pp}}),
		"nothing to do for a partition whose replicas all hold the same records")

	// A leader whose log end is unknown caps nothing.
	n = controlNode(t, now)
	for _, id := range pm.Replicas {
		if id != pm.Leader {
			n.hbs.record(report(id, 3), now)
		}
	}
	st, err = (&controlView{n: n}).Status("t", 0)
	require.NoError(t, err)
	for _, rs := range st.Replicas {
		if rs.BrokerID != st.Leader {
			require.Equal(t, uint64(3), *rs.LogEnd)
		}
	}
}
