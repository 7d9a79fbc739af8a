package kafka_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/pystream/pystream/server/auth"
)

// leaderOf is partition p of events' leader as a Metadata request
// answers it (kadm's Metadata may answer from the client's cache).
func leaderOf(t *testing.T, cl *kgo.Client, p int32) int32 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("events")}}
	resp, err := req.RequestWith(ctx(t), cl)
	require.NoError(t, err)
	require.Len(t, resp.Topics, 1)
	for _, mp := range resp.Topics[0].Partitions {
		if mp.Partition == p {
			require.Zero(t, mp.ErrorCode)
			return mp.Leader
		}
	}
	require.Failf(t, "no such partition", "%d", p)
	return -1
}

// TestKafkaElectLeadersPreferred: after the leadership of a partition
// was moved away from its preferred replica (the first of its replica
// list), kadm's preferred election hands it back, as Metadata then
// answers; a partition its preferred replica leads is
// ELECTION_NOT_NEEDED; every partition (null topics) elects where
// needed and leaves the others out of the answer, as Kafka does; a
// preferred replica outside the active set is
// PREFERRED_LEADER_NOT_AVAILABLE and keeps the leader where it is.
func TestKafkaElectLeadersPreferred(t *testing.T) {
	f := start(t, 3, 2, 3)
	cl := f.client(t)
	adm := kadm.NewClient(cl)
	preferred := map[int32]int{}
	for p := range int32(2) {
		st, err := f.c.Status("events", int(p))
		require.NoError(t, err)
		require.Equal(t, st.Placement[0], st.Leader, "placement leads at first")
		require.Equal(t, int32(st.Leader), leaderOf(t, cl, p))
		preferred[p] = st.Placement[0]
	}

	res, err := adm.ElectLeaders(ctx(t), kadm.ElectPreferredReplica, kadm.TopicsSet{"events": {0: {}}})
	require.NoError(t, err)
	require.ErrorIs(t, res["events"][0].Err, kerr.ElectionNotNeeded)

	away := func(p int32) int {
		st, err := f.c.Status("events", int(p))
		require.NoError(t, err)
		_, err = f.c.MoveLeader("events", int(p), st.Followers[0])
		require.NoError(t, err)
		require.Equal(t, int32(st.Followers[0]), leaderOf(t, cl, p))
		return st.Followers[0]
	}
	away(0)
	res, err = adm.ElectLeaders(ctx(t), kadm.ElectPreferredReplica, kadm.TopicsSet{"events": {0: {}}})
	require.NoError(t, err)
	require.NoError(t, res["events"][0].Err, res["events"][0].ErrMessage)
	require.Equal(t, int32(preferred[0]), leaderOf(t, cl, 0), "the preferred replica leads again")

	away(1)
	res, err = adm.ElectLeaders(ctx(t), kadm.ElectPreferredReplica, nil)
	require.NoError(t, err)
	require.Len(t, res["events"], 1, "partition 0 needed no election: left out (%v)", res)
	require.NoError(t, res["events"][1].Err)
	require.Equal(t, int32(preferred[1]), leaderOf(t, cl, 1))

	moved := away(0)
	_, err = f.c.Deactivate("events", 0, preferred[0])
	require.NoError(t, err)
	res, err = adm.ElectLeaders(ctx(t), kadm.ElectPreferredReplica, kadm.TopicsSet{"events": {0: {}}, "nope": {0: {}}})
	require.NoError(t, err)
	require.ErrorIs(t, res["events"][0].Err, kerr.PreferredLeaderNotAvailable)
	require.Contains(t, res["events"][0].ErrMessage, "active set")
	require.Equal(t, int32(moved), leaderOf(t, cl, 0), "the leader stays")
	require.ErrorIs(t, res["nope"][0].Err, kerr.UnknownTopicOrPartition)
}

// TestKafkaElectLeadersUnclean: an unclean election is not needed while
// the leader is available, as Kafka answers it; with the leader's broker
// stopped it is ELIGIBLE_LEADERS_NOT_AVAILABLE, saying that PyStream
// never elects a replica outside the active set, and the leadership is
// not changed.
func TestKafkaElectLeadersUnclean(t *testing.T) {
	f := start(t, 3, 1, 3)
	adm := f.admin(t)
	res, err := adm.ElectLeaders(ctx(t), kadm.ElectLiveReplica, kadm.TopicsSet{"events": {0: {}}})
	require.NoError(t, err)
	require.ErrorIs(t, res["events"][0].Err, kerr.ElectionNotNeeded)

	st, err := f.c.Status("events", 0)
	require.NoError(t, err)
	require.NoError(t, f.c.StopBroker(st.Leader))
	f.srv.Reconcile()
	res, err = adm.ElectLeaders(ctx(t), kadm.ElectLiveReplica, kadm.TopicsSet{"events": {0: {}}})
	require.NoError(t, err)
	require.ErrorIs(t, res["events"][0].Err, kerr.EligibleLeadersNotAvailable)
	require.Contains(t, res["events"][0].ErrMessage, "never elects a replica that is not in the active set")
	after, err := f.c.Status("events", 0)
	require.NoError(t, err)
	require.Equal(t, st.Leader, after.Leader)
	require.Equal(t, st.LeaderEpoch, after.LeaderEpoch)
}

// TestKafkaElectLeadersRaw: v0 elects preferred replicas whatever its
// (absent) election type; an election type Kafka does not define is
// INVALID_REQUEST with a message, whole and per partition, changing
// nothing; with an auth file only an admin without prefixes may elect
// (Kafka's ALTER on the cluster): a reader, a writer and an admin
// limited to prefixes are CLUSTER_AUTHORIZATION_FAILED.
func TestKafkaElectLeadersRaw(t *testing.T) {
	s := startSecured(t, false, 2, 1, 2)
	elect := func(who string, version int16, typ int8) *kmsg.ElectLeadersResponse {
		t.Helper()
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(int16(kmsg.ElectLeaders), version)
		req := kmsg.NewPtrElectLeadersRequest()
		req.ElectionType = typ
		req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "events", Partitions: []int32{0}}}
		resp, err := req.RequestWith(ctx(t), s.as(t, auth.MechanismPlain, who, kgo.MaxVersions(vs)))
		require.NoError(t, err)
		require.Equal(t, version, resp.Version)
		require.Len(t, resp.Topics, 1)
		require.Len(t, resp.Topics[0].Partitions, 1)
		return resp
	}
	code := func(resp *kmsg.ElectLeadersResponse) int16 { return resp.Topics[0].Partitions[0].ErrorCode }

	st, err := s.c.Status("events", 0)
	require.NoError(t, err)
	_, err = s.c.MoveLeader("events", 0, st.Followers[0])
	require.NoError(t, err)

	bad := elect("ops", 2, 2)
	require.Equal(t, kerr.InvalidRequest.Code, bad.ErrorCode)
	require.Equal(t, kerr.InvalidRequest.Code, code(bad))
	require.Contains(t, *bad.Topics[0].Partitions[0].ErrorMessage, "election type 2")
	for _, who := range []string{"reader", "writer", "payops"} {
		resp := elect(who, 2, 0)
		require.Equal(t, kerr.ClusterAuthorizationFailed.Code, resp.ErrorCode, who)
		require.Equal(t, kerr.ClusterAuthorizationFailed.Code, code(resp), who)
	}
	now, err := s.c.Status("events", 0)
	require.NoError(t, err)
	require.Equal(t, st.Followers[0], now.Leader, "nothing refused moved the leader")

	resp := elect("ops", 0, 1) // v0 has no election type: preferred
	require.Zero(t, code(resp))
	now, err = s.c.Status("events", 0)
	require.NoError(t, err)
	require.Equal(t, st.Leader, now.Leader)
	require.Equal(t, kerr.ElectionNotNeeded.Code, code(elect("ops", 1, 0)))
}
