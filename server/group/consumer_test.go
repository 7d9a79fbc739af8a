package group

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// cluster is the topics a test coordinator sees; tests change them.
type fakeTopics struct {
	mu     sync.Mutex
	counts map[string]int32
}

func (f *fakeTopics) lookup(names []string) map[string]int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int32{}
	for _, n := range names {
		if c, ok := f.counts[n]; ok {
			out[n] = c
		}
	}
	return out
}

func (f *fakeTopics) set(name string, n int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[name] = n
}

// newCoordinator is a coordinator with Kafka's default timeouts over the
// topic orders of 4 partitions.
func newCoordinator(t *testing.T) (*ConsumerCoordinator, *fakeTopics) {
	t.Helper()
	f := &fakeTopics{counts: map[string]int32{"orders": 4}}
	c := NewConsumerCoordinator(ConsumerConfig{Topics: f.lookup})
	t.Cleanup(c.Close)
	return c, f
}

// join joins group g with a new member subscribed to topics.
func join(t *testing.T, c *ConsumerCoordinator, topics ...string) Assignment {
	t.Helper()
	a, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberEpoch: 0, Topics: topics})
	require.NoError(t, err)
	require.NotEmpty(t, a.MemberID)
	return a
}

// beat heartbeats as a's member, owning owned, and returns the answer.
func beat(t *testing.T, c *ConsumerCoordinator, a Assignment, owned ...TopicPartitions) Assignment {
	t.Helper()
	next, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: a.MemberID, MemberEpoch: a.MemberEpoch, Owned: owned})
	require.NoError(t, err)
	return next
}

// settle heartbeats every member in turn, each owning what it was last
// assigned, until no answer changes: the group's reconciliation run to
// its end. It returns the members' last answers.
func settle(t *testing.T, c *ConsumerCoordinator, members ...Assignment) []Assignment {
	t.Helper()
	for round := 0; round < 10; round++ {
		changed := false
		for i, a := range members {
			next := beat(t, c, a, a.Partitions...)
			changed = changed || next.MemberEpoch != a.MemberEpoch || !equalTargets(
				map[string][]TopicPartitions{"": next.Partitions}, map[string][]TopicPartitions{"": a.Partitions})
			members[i] = next
		}
		if !changed {
			return members
		}
	}
	t.Fatal("the group did not settle in 10 rounds")
	return nil
}

func memberErr(t *testing.T, err error, want error) *MemberError {
	t.Helper()
	var me *MemberError
	require.ErrorAs(t, err, &me)
	require.ErrorIs(t, err, want)
	return me
}

// KIP-848: the first member joins at group epoch 1 and is assigned every
// partition of its subscription at once.
func TestConsumerJoinAssignsEveryPartition(t *testing.T) {
	c, _ := newCoordinator(t)
	a := join(t, c, "orders")
	require.Equal(t, int32(1), a.MemberEpoch)
	require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, a.Partitions)
	require.Equal(t, DefaultHeartbeatInterval, a.HeartbeatInterval)
	d, ok := c.Describe("g")
	require.True(t, ok)
	require.Equal(t, StateReconciling, d.State, "assigned, not yet reported owned")
	a = beat(t, c, a, a.Partitions...)
	d, _ = c.Describe("g")
	require.Equal(t, StateStable, d.State)
	require.Equal(t, []Summary{{Group: "g", Protocol: Consumer, State: StateStable, Members: 1}}, c.List())
}

// KIP-848's "revoke, then assign": when a member joins, a partition moves
// to it only after its previous owner released it. Until then the new
// member is not assigned it and may not commit it; the old owner still
// may, at its new epoch.
func TestConsumerPartitionMovesOnlyAfterRelease(t *testing.T) {
	c, _ := newCoordinator(t)
	m1 := settle(t, c, join(t, c, "orders"))[0]
	m2 := join(t, c, "orders")
	require.Empty(t, m2.Partitions, "m1 still holds every partition")
	require.Equal(t, int32(2), m2.MemberEpoch)

	m1 = beat(t, c, m1, tps("orders", 0, 1, 2, 3))
	require.Equal(t, []TopicPartitions{tps("orders", 0, 1)}, m1.Partitions, "2 and 3 revoked")
	require.Equal(t, int32(2), m1.MemberEpoch, "a changed assignment carries the group epoch")

	m2 = beat(t, c, m2)
	require.Empty(t, m2.Partitions, "m1 has not released 2 and 3 yet")
	memberErr(t, checkConsumer(c, "g", m2.MemberID, m2.MemberEpoch, "orders", 2), ErrNotOwned)
	require.NoError(t, checkConsumer(c, "g", m1.MemberID, m1.MemberEpoch, "orders", 2), "the old owner commits before releasing")

	m1 = beat(t, c, m1, tps("orders", 0, 1)) // released
	memberErr(t, checkConsumer(c, "g", m1.MemberID, m1.MemberEpoch, "orders", 2), ErrNotOwned)
	m2 = beat(t, c, m2)
	require.Equal(t, []TopicPartitions{tps("orders", 2, 3)}, m2.Partitions)
	require.NoError(t, checkConsumer(c, "g", m2.MemberID, m2.MemberEpoch, "orders", 3))
}

// A member that leaves (epoch -1) frees its partitions at once: the others
// are assigned them at their next heartbeat.
func TestConsumerLeaveFreesPartitions(t *testing.T) {
	c, _ := newCoordinator(t)
	ms := settle(t, c, join(t, c, "orders"))
	ms = settle(t, c, ms[0], join(t, c, "orders"))
	require.Len(t, ms[1].Partitions[0].Partitions, 2)

	left, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: ms[1].MemberID, MemberEpoch: -1})
	require.NoError(t, err)
	require.Equal(t, int32(-1), left.MemberEpoch)
	require.Empty(t, left.Partitions)

	m1 := beat(t, c, ms[0], ms[0].Partitions...)
	require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, m1.Partitions)
	d, _ := c.Describe("g")
	require.Len(t, d.Members, 1)
}

// KIP-848's session timeout: a member that stops heartbeating is removed
// once group.consumer.session.timeout.ms (45 s by default) has passed,
// and its partitions go to the members that are left, although it never
// released them. Time is synctest's.
func TestConsumerSessionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCoordinator(t)
		ms := settle(t, c, join(t, c, "orders"))
		ms = settle(t, c, ms[0], join(t, c, "orders"))
		m1 := ms[0] // m2 stops here, holding 2 and 3

		start := time.Now()
		for range 8 { // 40 s of heartbeats: m2 is still a member
			time.Sleep(DefaultHeartbeatInterval)
			m1 = beat(t, c, m1, m1.Partitions...)
		}
		require.Len(t, m1.Partitions[0].Partitions, 2)
		d, _ := c.Describe("g")
		require.Len(t, d.Members, 2)

		for range 2 {
			time.Sleep(DefaultHeartbeatInterval)
			m1 = beat(t, c, m1, m1.Partitions...)
		}
		require.Greater(t, time.Since(start), DefaultSessionTimeout)
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, m1.Partitions)
		d, _ = c.Describe("g")
		require.Len(t, d.Members, 1)
		memberErr(t, checkConsumer(c, "g", ms[1].MemberID, ms[1].MemberEpoch, "orders", 2), ErrUnknownMember)
	})
}

// A heartbeat that changes nothing waits, up to the heartbeat interval,
// for its member's assignment to change: a stable member learns of a
// rebalance when it happens, not at its next heartbeat. Time is
// synctest's, so "at once" is exactly zero.
func TestConsumerLongPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCoordinator(t)
		m1 := settle(t, c, join(t, c, "orders"))[0]

		start := time.Now()
		quiet, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: m1.MemberID, MemberEpoch: m1.MemberEpoch,
			Owned: m1.Partitions, MaxWait: time.Minute})
		require.NoError(t, err)
		require.Equal(t, DefaultHeartbeatInterval, time.Since(start), "nothing changed: answered after the interval, not MaxWait")
		require.Equal(t, m1, quiet)

		answered := make(chan Assignment)
		go func() {
			a, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: m1.MemberID, MemberEpoch: m1.MemberEpoch,
				Owned: m1.Partitions, MaxWait: time.Minute})
			if err != nil {
				t.Error(err)
			}
			answered <- a
		}()
		synctest.Wait() // m1's heartbeat is waiting
		time.Sleep(time.Second)
		start = time.Now()
		join(t, c, "orders")
		got := <-answered
		require.Zero(t, time.Since(start), "the revocation is answered at once")
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1)}, got.Partitions)
	})
}

// A waiting heartbeat also wakes when another member's session ends, so
// the survivor is assigned the dead member's partitions within its own
// wait.
func TestConsumerLongPollWakesOnSessionEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCoordinator(t)
		ms := settle(t, c, join(t, c, "orders"))
		ms = settle(t, c, ms[0], join(t, c, "orders"))
		m2 := ms[1]
		deadline := time.Now().Add(DefaultSessionTimeout)
		for time.Now().Add(DefaultHeartbeatInterval).Before(deadline) {
			time.Sleep(DefaultHeartbeatInterval)
			m2 = beat(t, c, m2, m2.Partitions...)
		}
		// m1 went quiet 45 s ago, less than one interval from now.
		a, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: m2.MemberID, MemberEpoch: m2.MemberEpoch,
			Owned: m2.Partitions, MaxWait: DefaultHeartbeatInterval})
		require.NoError(t, err)
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, a.Partitions)
		require.False(t, time.Now().Before(deadline))
		require.Less(t, time.Since(deadline), time.Second)
	})
}

// Fencing: a heartbeat or a commit must send the member's current epoch;
// an older (or a made-up) one is FENCED_MEMBER_EPOCH and changes nothing.
func TestConsumerStaleEpoch(t *testing.T) {
	c, _ := newCoordinator(t)
	ms := settle(t, c, join(t, c, "orders"))
	old := ms[0]
	ms = settle(t, c, old, join(t, c, "orders"))
	require.Greater(t, ms[0].MemberEpoch, old.MemberEpoch)

	for _, epoch := range []int32{old.MemberEpoch, ms[0].MemberEpoch + 1} {
		_, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: old.MemberID, MemberEpoch: epoch})
		me := memberErr(t, err, ErrFencedMemberEpoch)
		require.Equal(t, epoch, me.Epoch)
		require.Equal(t, ms[0].MemberEpoch, me.Current)
		memberErr(t, checkConsumer(c, "g", old.MemberID, epoch, "orders", 0), ErrFencedMemberEpoch)
	}
	require.NoError(t, checkConsumer(c, "g", ms[0].MemberID, ms[0].MemberEpoch, "orders", 0))
}

// UNKNOWN_MEMBER_ID: a member id the group does not have, in a group with
// members or in none at all, for a heartbeat, a leave or a commit.
func TestConsumerUnknownMember(t *testing.T) {
	c, _ := newCoordinator(t)
	for _, hb := range []Heartbeat{{MemberID: "nobody", MemberEpoch: 3}, {MemberID: "nobody", MemberEpoch: -1}} {
		_, err := c.Heartbeat(context.Background(), "g", hb)
		memberErr(t, err, ErrUnknownMember)
	}
	settle(t, c, join(t, c, "orders"))
	_, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: "nobody", MemberEpoch: 1})
	me := memberErr(t, err, ErrUnknownMember)
	require.Equal(t, "nobody", me.MemberID)
	memberErr(t, checkConsumer(c, "g", "nobody", 1, "orders", 0), ErrUnknownMember)
	memberErr(t, checkConsumer(c, "other", "nobody", 1, "orders", 0), ErrUnknownMember)
}

// A member that joins again under its id (epoch 0: what a fenced member
// does) is a new incarnation: the old one's partitions are free, and a
// heartbeat of the old one still waiting ends as unknown.
func TestConsumerRejoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCoordinator(t)
		m1 := settle(t, c, join(t, c, "orders"))[0]
		waiting := make(chan error)
		go func() {
			_, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: m1.MemberID, MemberEpoch: m1.MemberEpoch,
				Owned: m1.Partitions, MaxWait: time.Second})
			waiting <- err
		}()
		synctest.Wait()
		again, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: m1.MemberID, MemberEpoch: 0, Topics: []string{"orders"}})
		require.NoError(t, err)
		require.Equal(t, m1.MemberID, again.MemberID)
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, again.Partitions)
		memberErr(t, <-waiting, ErrUnknownMember)
	})
}

// A member cannot claim a partition it was never assigned: owned is
// limited to what it was given.
func TestConsumerOwnedLimitedToAssigned(t *testing.T) {
	c, _ := newCoordinator(t)
	ms := settle(t, c, join(t, c, "orders"))
	ms = settle(t, c, ms[0], join(t, c, "orders"))
	m2 := ms[1]
	beat(t, c, m2, tps("orders", 0, 1, 2, 3))
	memberErr(t, checkConsumer(c, "g", m2.MemberID, m2.MemberEpoch, "orders", ms[0].Partitions[0].Partitions[0]), ErrNotOwned)
}

// A subscription to a topic that does not exist yet assigns nothing; once
// it exists, the next heartbeat's group epoch is new and assigns it.
func TestConsumerTopicCreatedLater(t *testing.T) {
	c, f := newCoordinator(t)
	a := join(t, c, "later")
	require.Empty(t, a.Partitions)
	a = beat(t, c, a)
	require.Empty(t, a.Partitions)
	f.set("later", 2)
	next := beat(t, c, a)
	require.Greater(t, next.MemberEpoch, a.MemberEpoch)
	require.Equal(t, []TopicPartitions{tps("later", 0, 1)}, next.Partitions)
}

// A group speaks one protocol at a time: a consumer member cannot join a
// group held by classic members; the first consumer member claims it,
// the last one to leave releases it.
func TestConsumerClassicGroupRefused(t *testing.T) {
	r := NewRegistry()
	c := NewConsumerCoordinator(ConsumerConfig{Registry: r})
	require.NoError(t, r.Claim("g", Classic))
	_, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberEpoch: 0, Topics: []string{"orders"}})
	var mismatch *ProtocolMismatchError
	require.ErrorAs(t, err, &mismatch)
	require.Equal(t, Classic, mismatch.Has)
	require.Empty(t, c.List())

	r.Release("g", Classic)
	a := join(t, c, "orders")
	p, ok := r.Protocol("g")
	require.True(t, ok)
	require.Equal(t, Consumer, p)
	require.ErrorIs(t, r.Unmanaged("g"), ErrManaged)
	_, err = c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: a.MemberID, MemberEpoch: -1})
	require.NoError(t, err)
	_, ok = r.Protocol("g")
	require.False(t, ok, "released with its last member")
}

// Heartbeats that break the protocol are refused before they touch a
// group.
func TestConsumerInvalidHeartbeats(t *testing.T) {
	c, _ := newCoordinator(t)
	for _, tt := range []struct {
		name  string
		group string
		hb    Heartbeat
		want  error
	}{
		{"epoch below -1", "g", Heartbeat{MemberID: "m", MemberEpoch: -2}, ErrInvalidHeartbeat},
		{"epoch without member id", "g", Heartbeat{MemberEpoch: 3}, ErrInvalidHeartbeat},
		{"join without topics", "g", Heartbeat{}, ErrInvalidHeartbeat},
		{"empty topics", "g", Heartbeat{MemberID: "m", MemberEpoch: 1, Topics: []string{}}, ErrInvalidHeartbeat},
		{"negative partition", "g", Heartbeat{MemberID: "m", MemberEpoch: 1, Owned: []TopicPartitions{tps("orders", -1)}}, ErrInvalidHeartbeat},
		{"group id", "a/b", Heartbeat{Topics: []string{"orders"}}, topic.ErrInvalidName},
		{"topic name", "g", Heartbeat{Topics: []string{".."}}, topic.ErrInvalidName},
		{"member id", "g", Heartbeat{MemberID: "a b", Topics: []string{"orders"}}, topic.ErrInvalidName},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Heartbeat(context.Background(), tt.group, tt.hb)
			require.ErrorIs(t, err, tt.want)
		})
	}
	require.Empty(t, c.List())
}

// Clear forgets every group (this server is no longer the coordinator):
// a waiting heartbeat ends as unknown, the registry is free.
func TestConsumerClear(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewRegistry()
		c := NewConsumerCoordinator(ConsumerConfig{Registry: r, Topics: (&fakeTopics{counts: map[string]int32{"orders": 1}}).lookup})
		a := join(t, c, "orders")
		done := make(chan error)
		go func() {
			_, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: a.MemberID, MemberEpoch: a.MemberEpoch,
				Owned: a.Partitions, MaxWait: time.Second})
			done <- err
		}()
		synctest.Wait()
		c.Clear()
		require.True(t, errors.Is(<-done, ErrUnknownMember))
		require.Empty(t, c.List())
		_, ok := r.Protocol("g")
		require.False(t, ok)
	})
}

// A held heartbeat whose client went away changes nothing of its member,
// even when a change for it came at the same moment: an answer nobody
// reads must not move the member's epoch, or its next heartbeat would be
// fenced.
func TestConsumerGoneHeartbeatKeepsEpoch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCoordinator(t)
		m1 := settle(t, c, join(t, c, "orders"))[0]
		m2 := join(t, c, "orders")
		join(t, c, "orders")                  // a third member: the group epoch moves past m2's
		m1 = beat(t, c, m1, m1.Partitions...) // revoked down to its share, not released yet
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.Heartbeat(ctx, "g", Heartbeat{MemberID: m2.MemberID, MemberEpoch: m2.MemberEpoch, MaxWait: time.Minute})
			done <- err
		}()
		synctest.Wait()
		c.mu.Lock() // the client goes away as m1 releases what it lost
		cancel()
		g := c.groups["g"]
		g.members[m1.MemberID].owned = setOf(m1.Partitions)
		g.signal()
		c.mu.Unlock()
		require.ErrorIs(t, <-done, context.Canceled)
		next := beat(t, c, m2) // at its old epoch: not fenced
		require.Greater(t, next.MemberEpoch, m2.MemberEpoch)
		require.NotEmpty(t, next.Partitions)
	})
}
