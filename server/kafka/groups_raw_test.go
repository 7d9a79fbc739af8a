package kafka_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/server/kafka"
)

// joinRequest is a JoinGroup of one "range" consumer of "events" at
// version v, with a 1 s session and a 5 s rebalance timeout.
func joinRequest(v int16, groupID, memberID string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID = v, groupID, memberID
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = 1000, 5000, "consumer"
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{"events"}
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", meta.AppendTo(nil)
	req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
	return req
}

// rawJoin sends a JoinGroup of one "range" consumer at version v on nc.
func rawJoin(t *testing.T, nc net.Conn, v int16, groupID, memberID string, instance *string, sessionMs int32) *kmsg.JoinGroupResponse {
	t.Helper()
	req := joinRequest(v, groupID, memberID)
	req.InstanceID, req.SessionTimeoutMillis = instance, sessionMs
	return roundTrip(t, nc, req, v).(*kmsg.JoinGroupResponse)
}

// rawMember joins groupID alone over nc as JoinGroup v5 does (member id
// required, then given) and syncs; it returns its member id and
// generation.
func rawMember(t *testing.T, nc net.Conn, groupID string, instance *string) (string, int32) {
	t.Helper()
	resp := rawJoin(t, nc, 5, groupID, "", instance, 1000)
	if resp.ErrorCode == kerr.MemberIDRequired.Code {
		resp = rawJoin(t, nc, 5, groupID, resp.MemberID, instance, 1000)
	}
	require.Zero(t, resp.ErrorCode, kerr.ErrorForCode(resp.ErrorCode))
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.MemberID, sync.InstanceID, sync.Generation = 3, groupID, resp.MemberID, instance, resp.Generation
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: resp.MemberID, MemberAssignment: []byte{}}}
	sresp := roundTrip(t, nc, sync, 3).(*kmsg.SyncGroupResponse)
	require.Zero(t, sresp.ErrorCode)
	return resp.MemberID, resp.Generation
}

func rawHeartbeat(t *testing.T, nc net.Conn, groupID, memberID string, instance *string, generation int32) int16 {
	t.Helper()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.InstanceID, req.Generation = 4, groupID, memberID, instance, generation
	return roundTrip(t, nc, req, 4).(*kmsg.HeartbeatResponse).ErrorCode
}

func rawCommit(t *testing.T, nc net.Conn, groupID, memberID string, instance *string, generation int32) int16 {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.MemberID, req.InstanceID, req.Generation = 7, groupID, memberID, instance, generation
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "events"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return roundTrip(t, nc, req, 7).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

// TestKafkaGroupRawRefusals pins the group APIs' answers to bad input
// over a raw connection: a group id that is not a valid consumer id, a
// session timeout below the minimum, a join without protocols, an
// unknown member, a wrong generation, a group whose members speak the
// other protocol; and the listener keeps serving the group after each.
func TestKafkaGroupRawRefusals(t *testing.T) {
	f := startGroups(t, 1, 1, 1)
	nc := f.dial(t, 1)
	require.Equal(t, kerr.InvalidGroupID.Code, rawJoin(t, nc, 5, "bad id", "", nil, 1000).ErrorCode)
	require.Equal(t, kerr.InvalidGroupID.Code, rawHeartbeat(t, nc, "bad/id", "m", nil, 1))
	require.Equal(t, kerr.InvalidSessionTimeout.Code, rawJoin(t, nc, 5, "g", "", nil, 10).ErrorCode)
	require.Equal(t, kerr.InvalidSessionTimeout.Code, rawJoin(t, nc, 5, "g", "", nil, -1).ErrorCode)
	empty := kmsg.NewPtrJoinGroupRequest()
	empty.Version, empty.Group, empty.SessionTimeoutMillis, empty.ProtocolType = 5, "g", 1000, "consumer"
	require.Equal(t, kerr.InconsistentGroupProtocol.Code, roundTrip(t, nc, empty, 5).(*kmsg.JoinGroupResponse).ErrorCode)
	unknown := rawJoin(t, nc, 5, "g", "nobody", nil, 1000)
	require.Equal(t, kerr.UnknownMemberID.Code, unknown.ErrorCode)
	require.Equal(t, "nobody", unknown.MemberID)
	require.Equal(t, int32(-1), unknown.Generation)
	require.Equal(t, kerr.UnknownMemberID.Code, rawHeartbeat(t, nc, "g", "nobody", nil, 1))

	// JoinGroup v4+ gives a new member its id first (KIP-394); v3 does not.
	first := rawJoin(t, nc, 4, "g4", "", nil, 1000)
	require.Equal(t, kerr.MemberIDRequired.Code, first.ErrorCode)
	require.NotEmpty(t, first.MemberID)
	old := rawJoin(t, f.dial(t, 1), 3, "g3", "", nil, 1000)
	require.Zero(t, old.ErrorCode)
	require.Equal(t, old.MemberID, old.LeaderID)

	memberID, generation := rawMember(t, nc, "g", nil)
	require.Equal(t, kerr.IllegalGeneration.Code, rawHeartbeat(t, nc, "g", memberID, nil, generation+1))
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.MemberID, sync.Generation = 5, "g", memberID, generation-1
	require.Equal(t, kerr.IllegalGeneration.Code, roundTrip(t, nc, sync, 5).(*kmsg.SyncGroupResponse).ErrorCode)
	sync.Generation, sync.Protocol = generation, kmsg.StringPtr("roundrobin")
	require.Equal(t, kerr.InconsistentGroupProtocol.Code, roundTrip(t, nc, sync, 5).(*kmsg.SyncGroupResponse).ErrorCode)
	require.Equal(t, kerr.UnknownMemberID.Code, rawCommit(t, nc, "g", "", nil, -1), "a simple commit while the group has members")
	require.Zero(t, rawCommit(t, nc, "g", memberID, nil, generation))
	require.Zero(t, rawHeartbeat(t, nc, "g", memberID, nil, generation), "still a member")

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group, leave.MemberID = 0, "g", "nobody"
	require.Equal(t, kerr.UnknownMemberID.Code, roundTrip(t, nc, leave, 0).(*kmsg.LeaveGroupResponse).ErrorCode)

	// The other protocol holds the group: a classic join is refused.
	require.NoError(t, f.registry.Claim("http-group", group.Consumer))
	require.Equal(t, kerr.InconsistentGroupProtocol.Code, rawJoin(t, nc, 5, "http-group", "", nil, 1000).ErrorCode)
	require.Equal(t, kerr.UnknownMemberID.Code, rawCommit(t, nc, "http-group", "", nil, -1))
}

// TestKafkaGroupRawStaticFencing: a static member (group.instance.id)
// that joins again without its member id takes its instance's place; the
// old member id is fenced (FENCED_INSTANCE_ID) for heartbeats and
// commits, and a LeaveGroup v3+ can remove the member by instance id.
func TestKafkaGroupRawStaticFencing(t *testing.T) {
	f := startGroups(t, 1, 1, 1)
	nc := f.dial(t, 1)
	instance := kmsg.StringPtr("worker-1")
	old, generation := rawMember(t, nc, "g", instance)
	again := rawJoin(t, nc, 5, "g", "", instance, 1000)
	require.Zero(t, again.ErrorCode)
	require.NotEqual(t, old, again.MemberID)
	require.Equal(t, generation, again.Generation, "a static member's restart does not rebalance")
	require.Equal(t, kerr.FencedInstanceID.Code, rawHeartbeat(t, nc, "g", old, instance, generation))
	require.Equal(t, kerr.FencedInstanceID.Code, rawCommit(t, nc, "g", old, instance, generation))
	require.Zero(t, rawHeartbeat(t, nc, "g", again.MemberID, instance, generation))

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 5, "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: instance}, {MemberID: "nobody"}}
	resp := roundTrip(t, nc, leave, 5).(*kmsg.LeaveGroupResponse)
	require.Zero(t, resp.ErrorCode)
	require.Len(t, resp.Members, 2)
	require.Zero(t, resp.Members[0].ErrorCode)
	require.Equal(t, kerr.UnknownMemberID.Code, resp.Members[1].ErrorCode)
	_, ok := f.groups.Describe("g")
	require.False(t, ok, "the group is empty")
}

// TestKafkaGroupRawHeartbeatStorm: a client sending heartbeats as fast
// as it can on one connection (a bounded loop) is answered every time,
// changes nothing in the group, and another member's requests are
// served meanwhile.
func TestKafkaGroupRawHeartbeatStorm(t *testing.T) {
	f := startGroups(t, 1, 1, 1)
	nc := f.dial(t, 1)
	memberID, generation := rawMember(t, nc, "g", nil)
	storm := f.dial(t, 1)
	require.NoError(t, storm.SetDeadline(time.Now().Add(20*time.Second)))
	const beats = 2000
	start := time.Now()
	for i := range beats {
		if code := rawHeartbeat(t, storm, "g", memberID, nil, generation); code != 0 {
			t.Fatalf("heartbeat %d: %v", i, kerr.ErrorForCode(code))
		}
		if i%500 == 0 {
			require.Equal(t, kerr.UnknownMemberID.Code, rawHeartbeat(t, nc, "g", "nobody", nil, generation))
		}
	}
	t.Logf("%d heartbeats in %v", beats, time.Since(start))
	d, ok := f.groups.Describe("g")
	require.True(t, ok)
	require.Equal(t, group.StateStable, d.State)
	require.Equal(t, generation, d.Generation, "no rebalance")
	require.Len(t, d.Members, 1)
}

// TestKafkaGroupRawDescribeList: DescribeGroups and ListGroups show the
// classic coordinator's groups, the other protocol's (Config.OtherGroups),
// and the consumer ids that only committed offsets (Empty); an unknown
// group is Dead, an invalid id INVALID_GROUP_ID; ListGroups filters by
// state (v4) and type (v5).
func TestKafkaGroupRawDescribeList(t *testing.T) {
	reg := group.NewRegistry()
	classic := group.NewClassicCoordinator(reg, group.ClassicConfig{MinSessionTimeout: 50 * time.Millisecond})
	t.Cleanup(classic.Close)
	other := fakeLister{group.Description{Group: "http-group", Protocol: group.Consumer, State: group.StateStable, ProtocolType: "consumer",
		Assignor: "uniform", Generation: 4, Members: []group.Member{{ID: "m1", ClientID: "pystream", ClientHost: "/127.0.0.1",
			Assigned: []group.TopicPartitions{{Topic: "events", Partitions: []int32{0}}}}}}}
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.Groups, c.OtherGroups = classic, other })
	require.NoError(t, f.c.CommitOffset("offsets-only", "events", 0, 0))
	nc := f.dial(t, 1)
	rawMember(t, nc, "classic-group", nil)

	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Version = 5
	describe.Groups = []string{"classic-group", "http-group", "offsets-only", "nobody", "bad id"}
	resp := roundTrip(t, nc, describe, 5).(*kmsg.DescribeGroupsResponse)
	require.Len(t, resp.Groups, 5)
	byID := map[string]kmsg.DescribeGroupsResponseGroup{}
	for _, g := range resp.Groups {
		byID[g.Group] = g
	}
	require.Equal(t, "Stable", byID["classic-group"].State)
	require.Equal(t, "range", byID["classic-group"].Protocol)
	require.Len(t, byID["classic-group"].Members, 1)
	require.Equal(t, "/127.0.0.1", byID["classic-group"].Members[0].ClientHost)
	require.Equal(t, "raw", byID["classic-group"].Members[0].ClientID)
	require.Equal(t, "Stable", byID["http-group"].State)
	require.Equal(t, "uniform", byID["http-group"].Protocol)
	var a kmsg.ConsumerMemberAssignment
	require.NoError(t, a.ReadFrom(byID["http-group"].Members[0].MemberAssignment), "an HTTP member's partitions, as Kafka tools decode them")
	require.Equal(t, []int32{0}, a.Topics[0].Partitions)
	require.Equal(t, "Empty", byID["offsets-only"].State)
	require.Equal(t, "Dead", byID["nobody"].State)
	require.Zero(t, byID["nobody"].ErrorCode)
	require.Equal(t, kerr.InvalidGroupID.Code, byID["bad id"].ErrorCode)

	list := func(v int16, states, types []string) map[string]string {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version, req.StatesFilter, req.TypesFilter = v, states, types
		resp := roundTrip(t, nc, req, v).(*kmsg.ListGroupsResponse)
		require.Zero(t, resp.ErrorCode)
		out := map[string]string{}
		for _, g := range resp.Groups {
			out[g.Group] = g.GroupState + "/" + g.GroupType
		}
		return out
	}
	require.Equal(t, map[string]string{"classic-group": "Stable/classic", "http-group": "Stable/consumer", "offsets-only": "Empty/classic"}, list(5, nil, nil))
	require.Equal(t, map[string]string{"offsets-only": "Empty/"}, list(4, []string{"empty"}, nil))
	require.Equal(t, map[string]string{"http-group": "Stable/consumer"}, list(5, nil, []string{"Consumer"}))
	require.Len(t, list(0, nil, nil), 3)
}

// fakeLister is the other protocol's coordinator with one group.
type fakeLister struct{ d group.Description }

func (l fakeLister) List() []group.Summary {
	return []group.Summary{{Group: l.d.Group, Protocol: l.d.Protocol, State: l.d.State, Members: len(l.d.Members)}}
}

func (l fakeLister) Describe(id string) (group.Description, bool) { return l.d, id == l.d.Group }

// A JoinGroup that waits for a rebalance ends when its client closes the
// connection, not when the rebalance does: the connection's goroutine is
// not held for the rebalance timeout. A client that sends another request
// on the connection while its join waits is alive: that request is
// answered after the join, in order.
func TestKafkaGroupRawJoinEndsWithItsClient(t *testing.T) {
	reg := prometheus.NewRegistry()
	groups := group.NewClassicCoordinator(group.NewRegistry(), group.ClassicConfig{MinSessionTimeout: 50 * time.Millisecond})
	t.Cleanup(groups.Close)
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.Groups, c.Registerer = groups, reg })
	memberID, _ := rawMember(t, f.dial(t, 1), "g", nil)

	joins := func() float64 { return requestsOf(t, reg, "JoinGroup") }
	before := joins()
	gone := f.dial(t, 1)
	_, err := gone.Write(kmsg.NewRequestFormatter().AppendRequest(nil, joinRequest(3, "g", ""), 1))
	require.NoError(t, err) // it waits: the first member has not joined again
	require.Never(t, func() bool { return joins() > before }, 100*time.Millisecond, 10*time.Millisecond)
	require.NoError(t, gone.Close())
	require.Eventually(t, func() bool { return joins() > before }, time.Second, 5*time.Millisecond,
		"answered (to no one) once its client left, not at the 5 s rebalance timeout")

	alive := f.dial(t, 1)
	frames := append(kmsg.NewRequestFormatter().AppendRequest(nil, joinRequest(3, "g", ""), 1),
		kmsg.NewRequestFormatter().AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 2)...)
	_, err = alive.Write(frames)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, _ := groups.Describe("g")
		return len(d.Members) == 3 // the first, the one gone (Kafka keeps it in the rebalance), this one
	}, time.Second, 5*time.Millisecond)
	require.Zero(t, rawJoin(t, f.dial(t, 1), 3, "g", memberID, nil, 1000).ErrorCode, "the first member joins again: the join completes")
	for _, want := range []int32{1, 2} {
		body := readFrame(t, alive)
		require.Equal(t, want, int32(binary.BigEndian.Uint32(body)), "the join's answer, then the next request's")
	}
}

// requestsOf is pystream_kafka_requests_total of api in reg.
func requestsOf(t *testing.T, reg *prometheus.Registry, api string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "pystream_kafka_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "api" && l.GetValue() == api {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// The coordinator's own refusals in Kafka's codes: a join to a group
// whose offsets are being deleted is COORDINATOR_NOT_AVAILABLE (clients
// retry, as for a Dead group), one that would start a group past the
// coordinator's most groups GROUP_MAX_SIZE_REACHED, and a join waiting
// when the coordinator is cleared (this node stopped leading the
// metadata group) NOT_COORDINATOR.
func TestKafkaGroupRawCoordinatorRefusals(t *testing.T) {
	f := startGroups(t, 1, 1, 1, func(c *group.ClassicConfig) { c.MaxGroups = 1 })
	release, err := f.registry.Hold("held")
	require.NoError(t, err)
	defer release()
	nc := f.dial(t, 1)
	require.Equal(t, kerr.CoordinatorNotAvailable.Code, rawJoin(t, nc, 3, "held", "", nil, 1000).ErrorCode)
	memberID, _ := rawMember(t, nc, "g", nil)
	require.Equal(t, kerr.GroupMaxSizeReached.Code, rawJoin(t, nc, 3, "other", "", nil, 1000).ErrorCode)

	waiting := f.dial(t, 1)
	_, err = waiting.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, joinRequest(3, "g", ""), 7))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, _ := f.groups.Describe("g")
		return len(d.Members) == 2
	}, time.Second, 5*time.Millisecond)
	f.groups.Clear()
	var size [4]byte
	_, err = io.ReadFull(waiting, size[:])
	require.NoError(t, err)
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err = io.ReadFull(waiting, body)
	require.NoError(t, err)
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.SetVersion(3)
	require.NoError(t, resp.ReadFrom(body[4:]))
	require.Equal(t, kerr.NotCoordinator.Code, resp.ErrorCode)
	require.Equal(t, kerr.UnknownMemberID.Code, rawHeartbeat(t, nc, "g", memberID, nil, 1), "the cleared coordinator knows no member")
}
