package group

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The classic coordinator's tests run inside testing/synctest bubbles:
// sessions and rebalance timeouts are real timers on a fake clock, so a
// 10-second session takes no time and the tests never sleep for real.

const (
	session   = 10 * time.Second
	rebalance = 20 * time.Second
)

// classicFixture is a coordinator with short Kafka-like bounds.
type classicFixture struct {
	c   *ClassicCoordinator
	reg *Registry
	m   *Metrics
	p   *prometheus.Registry
}

func newFixture(t *testing.T, edit ...func(*ClassicConfig)) *classicFixture {
	t.Helper()
	p := prometheus.NewRegistry()
	m, err := NewMetrics(p)
	require.NoError(t, err)
	cfg := ClassicConfig{MinSessionTimeout: time.Second, Metrics: m}
	for _, e := range edit {
		e(&cfg)
	}
	reg := NewRegistry()
	c := NewClassicCoordinator(reg, cfg)
	t.Cleanup(c.Close)
	return &classicFixture{c: c, reg: reg, m: m, p: p}
}

// joinReq is a consumer's JoinGroup of group "g" with protocols in its
// order of preference (metadata: the protocol's name).
func joinReq(memberID string, protocols ...string) JoinRequest {
	if len(protocols) == 0 {
		protocols = []string{"range"}
	}
	req := JoinRequest{Group: "g", MemberID: memberID, ClientID: "client", ClientHost: "/127.0.0.1",
		SessionTimeout: session, RebalanceTimeout: rebalance, ProtocolType: "consumer"}
	for _, p := range protocols {
		req.Protocols = append(req.Protocols, ProtocolMetadata{Name: p, Metadata: []byte(p)})
	}
	return req
}

type joinCall struct {
	res JoinResult
	err error
}

type syncCall struct {
	res SyncResult
	err error
}

// join starts a join; its answer arrives on the channel.
func (f *classicFixture) join(req JoinRequest) <-chan joinCall {
	ch := make(chan joinCall, 1)
	go func() {
		res, err := f.c.Join(context.Background(), req)
		ch <- joinCall{res, err}
	}()
	return ch
}

// sync starts a sync; its answer arrives on the channel.
func (f *classicFixture) sync(req SyncRequest) <-chan syncCall {
	ch := make(chan syncCall, 1)
	go func() {
		res, err := f.c.Sync(context.Background(), req)
		ch <- syncCall{res, err}
	}()
	return ch
}

// answered is the answer ch holds once every goroutine of the bubble is
// blocked; the test fails when there is none.
func answered[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	synctest.Wait()
	select {
	case v := <-ch:
		return v
	default:
		t.Fatal("no answer yet")
		panic("unreachable")
	}
}

// waiting asserts ch has no answer once the bubble is blocked.
func waiting[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	synctest.Wait()
	select {
	case v := <-ch:
		t.Fatalf("answered too early: %+v", v)
	default:
	}
}

// joinAlone joins a new member to a group it completes alone (no other
// member), v4-style: MEMBER_ID_REQUIRED first, then the join with the id.
func (f *classicFixture) joinAlone(t *testing.T, protocols ...string) JoinResult {
	t.Helper()
	req := joinReq("", protocols...)
	req.RequireKnownMemberID = true
	first := answered(t, f.join(req))
	require.ErrorIs(t, first.err, ErrMemberIDRequired)
	require.NotEmpty(t, first.res.MemberID)
	req.MemberID = first.res.MemberID
	got := answered(t, f.join(req))
	require.NoError(t, got.err)
	return got.res
}

// syncLeader syncs the leader with assignments and returns its own.
func (f *classicFixture) syncLeader(t *testing.T, leader JoinResult, assignments map[string][]byte) []byte {
	t.Helper()
	got := answered(t, f.sync(SyncRequest{Group: "g", MemberRef: MemberRef{MemberID: leader.MemberID}, Generation: leader.Generation,
		ProtocolType: "consumer", Protocol: leader.Protocol, Assignments: assignments}))
	require.NoError(t, got.err)
	return got.res.Assignment
}

func (f *classicFixture) heartbeat(r JoinResult) error {
	return f.c.Heartbeat("g", r.Generation, MemberRef{MemberID: r.MemberID})
}

// Kafka's classic protocol end to end: a join with MEMBER_ID_REQUIRED, a
// leader that receives every member's metadata, a follower's sync that
// waits for the leader's assignment, heartbeats answered
// REBALANCE_IN_PROGRESS while a new member joins, and a leave that
// rebalances the rest; the last member's leave empties and releases the
// group.
func TestClassicJoinSyncHeartbeatLeave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		a := f.joinAlone(t)
		require.Equal(t, int32(1), a.Generation)
		require.Equal(t, a.MemberID, a.LeaderID)
		require.Equal(t, "range", a.Protocol)
		require.Len(t, a.Members, 1)
		require.Equal(t, []byte("a"), f.syncLeader(t, a, map[string][]byte{a.MemberID: []byte("a")}))
		require.NoError(t, f.heartbeat(a))
		p, ok := f.reg.Protocol("g")
		require.True(t, ok)
		require.Equal(t, Classic, p)

		// B joins: A learns it from its heartbeat and joins again.
		bJoin := f.join(joinReq("", "range"))
		waiting(t, bJoin)
		require.ErrorIs(t, f.heartbeat(a), ErrRebalanceInProgress)
		aJoin := f.join(joinReq(a.MemberID))
		a2, b2 := answered(t, aJoin), answered(t, bJoin)
		require.NoError(t, a2.err)
		require.NoError(t, b2.err)
		require.Equal(t, int32(2), a2.res.Generation)
		require.Equal(t, int32(2), b2.res.Generation)
		require.Equal(t, a.MemberID, a2.res.LeaderID, "the leader stays")
		require.Equal(t, a.MemberID, b2.res.LeaderID)
		require.Len(t, a2.res.Members, 2, "the leader gets every member's metadata")
		require.Empty(t, b2.res.Members, "a follower gets none")

		// The follower's sync waits for the leader's assignment.
		bSync := f.sync(SyncRequest{Group: "g", MemberRef: MemberRef{MemberID: b2.res.MemberID}, Generation: 2})
		waiting(t, bSync)
		require.Equal(t, []byte("a2"), f.syncLeader(t, a2.res, map[string][]byte{a.MemberID: []byte("a2"), b2.res.MemberID: []byte("b2")}))
		got := answered(t, bSync)
		require.NoError(t, got.err)
		require.Equal(t, []byte("b2"), got.res.Assignment)
		require.Equal(t, "range", got.res.Protocol)

		// B leaves: A rebalances alone.
		errs, err := f.c.Leave("g", []MemberRef{{MemberID: b2.res.MemberID}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.ErrorIs(t, f.heartbeat(a2.res), ErrRebalanceInProgress)
		a3 := answered(t, f.join(joinReq(a.MemberID)))
		require.NoError(t, a3.err)
		require.Equal(t, int32(3), a3.res.Generation)
		require.Len(t, a3.res.Members, 1)

		errs, err = f.c.Leave("g", []MemberRef{{MemberID: a.MemberID}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.Empty(t, f.c.List())
		_, ok = f.reg.Protocol("g")
		require.False(t, ok, "the empty group is released")
		require.ErrorIs(t, f.heartbeat(a3.res), ErrUnknownMember)
	})
}

// A member that stops heartbeating is removed when its session timeout
// passes, and the group rebalances without it; one that heartbeats keeps
// its place however long it lives.
func TestClassicSessionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		a, b := f.stableTwo(t)
		for range 3 { // 15 s: past B's session, A heartbeating every 5 s
			time.Sleep(session / 2)
			if err := f.heartbeat(a); err != nil {
				require.ErrorIs(t, err, ErrRebalanceInProgress)
				break
			}
		}
		require.ErrorIs(t, f.heartbeat(b), ErrUnknownMember, "B's session expired")
		a2 := answered(t, f.join(joinReq(a.MemberID)))
		require.NoError(t, a2.err)
		require.Equal(t, a.Generation+1, a2.res.Generation)
		require.Len(t, a2.res.Members, 1)
	})
}

// stableTwo is a Stable group of two members at generation 2: a leader
// and a follower, each assigned its own name.
func (f *classicFixture) stableTwo(t *testing.T) (leader, follower JoinResult) {
	t.Helper()
	a := f.joinAlone(t)
	f.syncLeader(t, a, nil)
	bJoin := f.join(joinReq(""))
	waiting(t, bJoin)
	aJoin := f.join(joinReq(a.MemberID))
	a2, b2 := answered(t, aJoin), answered(t, bJoin)
	require.NoError(t, a2.err)
	require.NoError(t, b2.err)
	bSync := f.sync(SyncRequest{Group: "g", MemberRef: MemberRef{MemberID: b2.res.MemberID}, Generation: b2.res.Generation})
	f.syncLeader(t, a2.res, map[string][]byte{a2.res.MemberID: []byte("leader"), b2.res.MemberID: []byte("follower")})
	require.NoError(t, answered(t, bSync).err)
	return a2.res, b2.res
}

// Kafka's rebalance timeout: once a rebalance starts, a member that does
// not join again within it is removed, and the join completes with the
// members that did.
func TestClassicRebalanceTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		a, b := f.stableTwo(t)
		cJoin := f.join(joinReq(""))
		aJoin := f.join(joinReq(a.MemberID))
		waiting(t, aJoin) // B has not joined again
		start := time.Now()
		for time.Since(start) < rebalance-time.Second { // B heartbeats but never joins
			time.Sleep(time.Second)
			require.ErrorIs(t, f.heartbeat(b), ErrRebalanceInProgress)
		}
		waiting(t, aJoin)
		time.Sleep(2 * time.Second)
		a3, c3 := answered(t, aJoin), answered(t, cJoin)
		require.NoError(t, a3.err)
		require.NoError(t, c3.err)
		require.Equal(t, a.Generation+1, a3.res.Generation)
		require.Len(t, a3.res.Members, 2, "A and C, not B")
		require.ErrorIs(t, f.heartbeat(b), ErrUnknownMember)
	})
}

// Static membership (KIP-345): a static member that restarts — joins
// without its member id — takes its instance's place under a new id, the
// old id is fenced, and a Stable group does not rebalance: same
// generation, same assignment. A restart that changes the protocol the
// group would choose rebalances.
func TestClassicStaticMembership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		static := func(memberID string, protocols ...string) JoinRequest {
			r := joinReq(memberID, protocols...)
			r.InstanceID = "instance-1"
			return r
		}
		a := f.joinAlone(t, "range", "cooperative-sticky")
		f.syncLeader(t, a, nil)
		sJoin := f.join(static("", "range", "cooperative-sticky"))
		waiting(t, sJoin)
		aJoin := f.join(joinReq(a.MemberID, "range", "cooperative-sticky"))
		a2, s2 := answered(t, aJoin), answered(t, sJoin)
		require.NoError(t, s2.err)
		require.Contains(t, s2.res.MemberID, "instance-1-", "a static member's id starts with its instance id")
		sSync := f.sync(SyncRequest{Group: "g", MemberRef: MemberRef{MemberID: s2.res.MemberID, InstanceID: "instance-1"}, Generation: 2})
		f.syncLeader(t, a2.res, map[string][]byte{a.MemberID: []byte("a"), s2.res.MemberID: []byte("s")})
		require.Equal(t, []byte("s"), answered(t, sSync).res.Assignment)
		rebalances := testutil.ToFloat64(f.m.rebalances.WithLabelValues("g", "classic"))

		// The restart: no member id, the same protocols.
		s3 := answered(t, f.join(static("", "range", "cooperative-sticky")))
		require.NoError(t, s3.err)
		require.NotEqual(t, s2.res.MemberID, s3.res.MemberID)
		require.Equal(t, int32(2), s3.res.Generation, "no rebalance")
		require.Equal(t, a.MemberID, s3.res.LeaderID)
		require.Equal(t, rebalances, testutil.ToFloat64(f.m.rebalances.WithLabelValues("g", "classic")))
		require.ErrorIs(t, f.c.Heartbeat("g", 2, MemberRef{MemberID: s2.res.MemberID, InstanceID: "instance-1"}), ErrFencedInstance)
		got := answered(t, f.sync(SyncRequest{Group: "g", MemberRef: MemberRef{MemberID: s3.res.MemberID, InstanceID: "instance-1"}, Generation: 2}))
		require.NoError(t, got.err)
		require.Equal(t, []byte("s"), got.res.Assignment, "its place, its assignment")
		require.NoError(t, f.heartbeat(a2.res), "the other member saw nothing")

		// A restart that supports only another protocol changes the
		// group's choice: a rebalance.
		sJoin = f.join(static("", "cooperative-sticky"))
		waiting(t, sJoin)
		require.ErrorIs(t, f.heartbeat(a2.res), ErrRebalanceInProgress)
		a4 := answered(t, f.join(joinReq(a.MemberID, "range", "cooperative-sticky")))
		require.NoError(t, a4.err)
		require.Equal(t, int32(3), a4.res.Generation)
		require.Equal(t, "cooperative-sticky", a4.res.Protocol)
		require.NoError(t, answered(t, sJoin).err)
	})
}

// A restarted static leader is told by JoinGroup v9 (KIP-814) that it
// leads but must not assign; before v9 it is told the old leader id, so
// it does not assign either.
func TestClassicStaticLeaderSkipsAssignment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		req := joinReq("")
		req.InstanceID = "leader"
		first := answered(t, f.join(req))
		require.NoError(t, first.err)
		f.syncLeader(t, first.res, map[string][]byte{first.res.MemberID: []byte("x")})

		old := answered(t, f.join(req))
		require.NoError(t, old.err)
		require.Equal(t, first.res.MemberID, old.res.LeaderID, "v8: the old leader id")
		require.False(t, old.res.SkipAssignment)

		req.SkipAssignmentSupported = true
		v9 := answered(t, f.join(req))
		require.NoError(t, v9.err)
		require.Equal(t, v9.res.MemberID, v9.res.LeaderID)
		require.True(t, v9.res.SkipAssignment)
		require.Len(t, v9.res.Members, 1)
		require.Equal(t, int32(1), v9.res.Generation)
	})
}

// Requests with a stale generation are refused ILLEGAL_GENERATION:
// heartbeat, sync and commit; a commit during CompletingRebalance is
// REBALANCE_IN_PROGRESS; commits without membership are taken only while
// the group has no members.
func TestClassicStaleGenerationRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		require.NoError(t, checkClassic(f.c, "g", -1, MemberRef{}), "no members: a simple commit")
		require.ErrorIs(t, checkClassic(f.c, "g", 3, MemberRef{}), ErrUnknownMember, "a generation of a group without members: join again")
		require.ErrorIs(t, checkClassic(f.c, "g", -1, MemberRef{MemberID: "m"}), ErrUnknownMember)

		a, b := f.stableTwo(t)
		stale := a
		stale.Generation--
		require.ErrorIs(t, f.heartbeat(stale), ErrIllegalGeneration)
		require.ErrorIs(t, answered(t, f.sync(SyncRequest{Group: "g", MemberRef: MemberRef{MemberID: a.MemberID}, Generation: stale.Generation})).err, ErrIllegalGeneration)
		require.ErrorIs(t, checkClassic(f.c, "g", stale.Generation, MemberRef{MemberID: a.MemberID}), ErrIllegalGeneration)
		require.ErrorIs(t, checkClassic(f.c, "g", a.Generation, MemberRef{MemberID: "nobody"}), ErrUnknownMember)
		require.ErrorIs(t, checkClassic(f.c, "g", -1, MemberRef{}), ErrManaged, "members: no simple commit")
		require.NoError(t, checkClassic(f.c, "g", a.Generation, MemberRef{MemberID: a.MemberID}))

		// PreparingRebalance: the current generation may still commit
		// (an eager member's last commit before it joins again).
		cJoin := f.join(joinReq(""))
		waiting(t, cJoin)
		require.NoError(t, checkClassic(f.c, "g", b.Generation, MemberRef{MemberID: b.MemberID}))
		aJoin, bJoin := f.join(joinReq(a.MemberID)), f.join(joinReq(b.MemberID))
		a3 := answered(t, aJoin)
		answered(t, bJoin)
		answered(t, cJoin)
		require.ErrorIs(t, checkClassic(f.c, "g", a3.res.Generation, MemberRef{MemberID: a.MemberID}), ErrRebalanceInProgress)
		require.ErrorIs(t, checkClassic(f.c, "g", a.Generation, MemberRef{MemberID: a.MemberID}), ErrIllegalGeneration)
	})
}

// A group's initial rebalance waits ClassicConfig.InitialDelay for more
// members, extended by each new one (Kafka's InitialDelayedJoin), then
// answers them all in generation 1.
func TestClassicInitialDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, func(c *ClassicConfig) { c.InitialDelay = 3 * time.Second })
		start := time.Now()
		aJoin := f.join(joinReq(""))
		time.Sleep(time.Second)
		bJoin := f.join(joinReq(""))
		time.Sleep(time.Second)
		waiting(t, aJoin)
		time.Sleep(3 * time.Second) // 5 s: the first delay ended at 3 s and B extended it to 6 s
		waiting(t, aJoin)
		time.Sleep(time.Second)
		a, b := answered(t, aJoin), answered(t, bJoin)
		require.Equal(t, 6*time.Second, time.Since(start))
		require.NoError(t, a.err)
		require.Equal(t, int32(1), a.res.Generation)
		require.Equal(t, int32(1), b.res.Generation)
	})
}

// With no initial delay (PyStream's default) a new group's first join
// completes at once.
func TestClassicNoInitialDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		start := time.Now()
		got := answered(t, f.join(joinReq("")))
		require.NoError(t, got.err)
		require.Zero(t, time.Since(start))
	})
}

// Refused joins: an id that is not a consumer id, a session timeout out
// of bounds, no protocols, protocols no member shares, a group held by
// the other protocol, and an unknown member id.
func TestClassicJoinRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		bad := joinReq("")
		bad.Group = "no spaces"
		require.ErrorIs(t, answered(t, f.join(bad)).err, ErrInvalidGroupID)
		bad = joinReq("")
		bad.InstanceID = "bad/instance"
		require.ErrorIs(t, answered(t, f.join(bad)).err, ErrInvalidGroupID)
		for _, d := range []time.Duration{time.Millisecond, 31 * time.Minute} {
			bad = joinReq("")
			bad.SessionTimeout = d
			require.ErrorIs(t, answered(t, f.join(bad)).err, ErrInvalidSessionTimeout, "%v", d)
		}
		bad = joinReq("")
		bad.Protocols = nil
		require.ErrorIs(t, answered(t, f.join(bad)).err, ErrInconsistentProtocol)
		require.ErrorIs(t, answered(t, f.join(joinReq("someone"))).err, ErrUnknownMember)

		f.joinAlone(t, "range")
		require.ErrorIs(t, answered(t, f.join(joinReq("", "roundrobin"))).err, ErrInconsistentProtocol)
		other := joinReq("", "range")
		other.ProtocolType = "connect"
		require.ErrorIs(t, answered(t, f.join(other)).err, ErrInconsistentProtocol)

		require.NoError(t, f.reg.Claim("http-group", Consumer))
		held := joinReq("")
		held.Group = "http-group"
		var mismatch *ProtocolMismatchError
		require.ErrorAs(t, answered(t, f.join(held)).err, &mismatch)
		require.Equal(t, Consumer, mismatch.Has)
		require.Len(t, f.c.List(), 1, "the refused groups left nothing behind")
	})
}

// A member that joined but never syncs is removed once the rebalance
// timeout passes after the join completed, and the group rebalances.
func TestClassicPendingSyncTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		a := f.joinAlone(t)
		f.syncLeader(t, a, nil)
		bJoin := f.join(joinReq(""))
		waiting(t, bJoin)
		a2 := answered(t, f.join(joinReq(a.MemberID)))
		b2 := answered(t, bJoin)
		require.NoError(t, b2.err)
		f.syncLeader(t, a2.res, nil) // B never syncs
		for range 4 {                // 24 s, past the rebalance timeout
			time.Sleep(6 * time.Second)
			if err := f.heartbeat(a2.res); err != nil {
				require.ErrorIs(t, err, ErrRebalanceInProgress)
				break
			}
		}
		require.ErrorIs(t, f.heartbeat(b2.res), ErrUnknownMember)
	})
}

// LeaveGroup v3+ takes a batch: members by id, a static member by its
// instance id alone; an unknown one fails alone.
func TestClassicLeaveBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		a, b := f.stableTwo(t)
		s := joinReq("")
		s.InstanceID = "s"
		sJoin := f.join(s)
		waiting(t, sJoin)
		aJoin, bJoin := f.join(joinReq(a.MemberID)), f.join(joinReq(b.MemberID))
		require.NoError(t, answered(t, aJoin).err)
		require.NoError(t, answered(t, bJoin).err)
		require.NoError(t, answered(t, sJoin).err)
		errs, err := f.c.Leave("g", []MemberRef{{MemberID: b.MemberID}, {InstanceID: "s"}, {MemberID: "nobody"}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		require.ErrorIs(t, errs[2], ErrUnknownMember)
		d, ok := f.c.Describe("g")
		require.True(t, ok)
		require.Len(t, d.Members, 1)
		require.Equal(t, a.MemberID, d.Members[0].ID)
	})
}

// Describe shows a Stable consumer group's members with their decoded
// assignments, List every group with members, and the metrics follow:
// members, generation and rebalances by group, gone once the group is
// empty.
func TestClassicDescribeListMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		a := f.joinAlone(t)
		assign := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "events", Partitions: []int32{2, 0, 1}}}}
		f.syncLeader(t, a, map[string][]byte{a.MemberID: assign.AppendTo(nil)})
		require.Equal(t, []Summary{{Group: "g", Protocol: Classic, State: StateStable, Members: 1}}, f.c.List())
		d, ok := f.c.Describe("g")
		require.True(t, ok)
		require.Equal(t, "range", d.Assignor)
		require.Equal(t, "consumer", d.ProtocolType)
		require.Equal(t, int32(1), d.Generation)
		require.Equal(t, []TopicPartitions{{Topic: "events", Partitions: []int32{0, 1, 2}}}, d.Members[0].Assigned)
		require.Equal(t, "client", d.Members[0].ClientID)
		_, ok = f.c.Describe("other")
		require.False(t, ok)

		require.Equal(t, 1.0, testutil.ToFloat64(f.m.members.WithLabelValues("g", "classic")))
		require.Equal(t, 1.0, testutil.ToFloat64(f.m.generation.WithLabelValues("g", "classic")))
		require.Equal(t, 1.0, testutil.ToFloat64(f.m.rebalances.WithLabelValues("g", "classic")))
		_, err := f.c.Leave("g", []MemberRef{{MemberID: a.MemberID}})
		require.NoError(t, err)
		n, err := testutil.GatherAndCount(f.p, "pystream_group_members", "pystream_group_generation", "pystream_group_rebalances_total")
		require.NoError(t, err)
		require.Zero(t, n, "an empty group has no series")
	})
}

// The HTTP coordinator calls NewMetrics with the same registry: both get
// the same collectors.
func TestClassicMetricsShared(t *testing.T) {
	p := prometheus.NewRegistry()
	m1, err := NewMetrics(p)
	require.NoError(t, err)
	m2, err := NewMetrics(p)
	require.NoError(t, err)
	m1.Members("a", Classic, 2)
	m2.Members("b", Consumer, 3)
	n, err := testutil.GatherAndCount(p, "pystream_group_members")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	var nilMetrics *Metrics
	nilMetrics.Rebalance("a", Classic) // records nothing, does not panic
}

// A join or sync whose caller goes away returns ErrClosed; the member
// stays in the rebalance. Close answers every waiting request.
func TestClassicWaitEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		a := f.joinAlone(t)
		f.syncLeader(t, a, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := f.c.Join(ctx, joinReq(""))
			done <- err
		}()
		waiting(t, done)
		cancel()
		require.ErrorIs(t, answered(t, done), ErrClosed)
		aJoin := f.join(joinReq(a.MemberID))
		// The gone member is in the rebalance: the join completes with both.
		a2 := answered(t, aJoin)
		require.NoError(t, a2.err)
		require.Len(t, a2.res.Members, 2)
		bJoin := f.join(joinReq(""))
		waiting(t, bJoin)
		f.c.Close()
		require.True(t, errors.Is(answered(t, bJoin).err, ErrClosed))
		require.ErrorIs(t, checkClassic(f.c, "g", a2.res.Generation, MemberRef{MemberID: a.MemberID}), ErrClosed, "a closed coordinator takes no commit")
	})
}

// A group holds at most ClassicConfig.MaxMembers members, those given an
// id and not yet joined included; a static member's restart takes no
// new place and is admitted when the group is full.
func TestClassicMaxMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, func(c *ClassicConfig) { c.MaxMembers = 2 })
		s := joinReq("")
		s.InstanceID = "s"
		first := answered(t, f.join(s))
		require.NoError(t, first.err)
		f.syncLeader(t, first.res, nil)
		pending := joinReq("")
		pending.RequireKnownMemberID = true
		require.ErrorIs(t, answered(t, f.join(pending)).err, ErrMemberIDRequired)
		require.ErrorIs(t, answered(t, f.join(pending)).err, ErrGroupFull)
		restart := answered(t, f.join(s))
		require.NoError(t, restart.err, "a static restart takes its own place")
	})
}
