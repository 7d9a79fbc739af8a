package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func capEnd(v uint64) *uint64 { return &v }

// TestStatusCapFollowers pins capFollowers (status.go), the rule of
// cluster mode's Status that server/clusternode's
// TestNodeStatusCapsStaleHeartbeat pins end to end: heartbeats are
// snapshots of different moments, so an active follower whose report is
// newer than its leader's — it took a write its leader appended after its
// own last report — is reported at its leader's log end, never ahead of it.
// An active follower takes only records its leader appended first, so the
// lead is the reports' age. An inactive follower is not capped (records
// it holds that its leader does not are what a recovery compares and
// cuts), nor is anything when the leader's log end is unknown; a
// follower behind its leader keeps its own log end; an unknown one stays
// unknown; the leader's own is never changed. The capped value is a copy,
// not the leader's pointer.
func TestStatusCapFollowers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leader *uint64
		// followers 2 and 3: their active flags and reported log ends
		active2, active3 bool
		end2, end3       *uint64
		want2, want3     *uint64
	}{
		{"active followers ahead of a stale leader report", capEnd(2), true, true, capEnd(3), capEnd(3), capEnd(2), capEnd(2)},
		{"one ahead, one behind", capEnd(5), true, true, capEnd(7), capEnd(4), capEnd(5), capEnd(4)},
		{"level", capEnd(5), true, true, capEnd(5), capEnd(5), capEnd(5), capEnd(5)},
		{"an inactive follower ahead is left as reported", capEnd(2), false, true, capEnd(9), capEnd(3), capEnd(9), capEnd(2)},
		{"an unknown follower log end stays unknown", capEnd(2), true, true, nil, capEnd(3), nil, capEnd(2)},
		{"the leader's log end unknown: nothing capped", nil, true, true, capEnd(3), capEnd(4), capEnd(3), capEnd(4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := time.Unix(1_700_000_000, 0)
			st := PartitionStatus{Topic: "t", Partition: 0, Leader: 1, Active: []int{1}, Replicas: []ReplicaStatus{
				{BrokerID: 1, Role: RoleLeader, Active: true, Available: true, LogEnd: tc.leader, ReportedAt: at},
				{BrokerID: 2, Role: RoleFollower, Active: tc.active2, Available: true, LogEnd: tc.end2, ReportedAt: at.Add(time.Second)},
				{BrokerID: 3, Role: RoleFollower, Active: tc.active3, Available: true, LogEnd: tc.end3, ReportedAt: at.Add(time.Second)},
			}}
			var leaderBefore uint64
			if tc.leader != nil {
				leaderBefore = *tc.leader
			}
			capFollowers(&st)
			require.Equal(t, tc.leader, st.Replicas[0].LogEnd, "the leader's own log end")
			require.Equal(t, tc.want2, st.Replicas[1].LogEnd, "follower 2")
			require.Equal(t, tc.want3, st.Replicas[2].LogEnd, "follower 3")
			if tc.leader != nil {
				for _, rs := range st.Replicas[1:] {
					require.NotSame(t, st.Replicas[0].LogEnd, rs.LogEnd, "broker %d shares the leader's pointer", rs.BrokerID)
					if rs.LogEnd != nil {
						*rs.LogEnd = 1000 // a caller changing one replica's value changes no other
					}
				}
				require.Equal(t, leaderBefore, *st.Replicas[0].LogEnd)
			}
			require.Equal(t, at.Add(time.Second), st.Replicas[1].ReportedAt, "the report's time is kept")
		})
	}
}

// TestStatusCapFollowersPlansNothing pins why capFollowers exists: over
// the capped status, the planner finds nothing to do for a partition whose
// replicas hold the same records, where over the raw reports it would
// take the followers "ahead of their leader" out of the active set —
// leaving no failover candidate should the leader stop next.
func TestStatusCapFollowersPlansNothing(t *testing.T) {
	raw := func() PartitionStatus {
		return PartitionStatus{Topic: "t", Partition: 0, Leader: 1, Preferred: 1, Active: []int{1, 2, 3}, Replicas: []ReplicaStatus{
			{BrokerID: 1, Role: RoleLeader, Active: true, Available: true, LogEnd: capEnd(2)},
			{BrokerID: 2, Role: RoleFollower, Active: true, Available: true, LogEnd: capEnd(3)},
			{BrokerID: 3, Role: RoleFollower, Active: true, Available: true, LogEnd: capEnd(3)},
		}}
	}
	plan := func(st PartitionStatus) []Action {
		pp := PlanPartition{Topic: st.Topic, Partition: st.Partition, Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, Preferred: st.Preferred}
		var brokers []PlanBroker
		for _, rs := range st.Replicas {
			pp.Replicas = append(pp.Replicas, PlanReplica{BrokerID: rs.BrokerID, Active: rs.Active, Available: rs.Available, LogEnd: rs.LogEnd})
			brokers = append(brokers, PlanBroker{ID: rs.BrokerID, Available: true})
		}
		return Plan(PlanInput{FailoverAfter: time.Second, Brokers: brokers, Partitions: []PlanPartition{pp}})
	}
	require.NotEmpty(t, plan(raw()), "the raw reports: followers ahead of their leader are acted on")
	st := raw()
	capFollowers(&st)
	require.Empty(t, plan(st), "capped: nothing to do")
}
