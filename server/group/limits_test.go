package group

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// The bounds that keep what clients send from growing a coordinator's
// memory without limit (limits.go).

// partitionsOf is the topics g's partition counts are kept for.
func partitionsOf(c *ConsumerCoordinator, group string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.groups[group]; g != nil {
		return sortedKeys(g.partitions)
	}
	return nil
}

// A heartbeat is checked against the group's members before anything it
// sends is used: one naming topics for a member the group does not have
// adds nothing to the group. The partition counts a group keeps are those
// of its members' subscriptions, and no others.
func TestConsumerPartitionCountsOfSubscriptionsOnly(t *testing.T) {
	c, f := newCoordinator(t)
	a := settle(t, c, join(t, c, "orders"))[0]
	for i := range 20 {
		_, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: "nobody", MemberEpoch: 3,
			Topics: []string{fmt.Sprintf("spam-%d", i)}})
		memberErr(t, err, ErrUnknownMember)
	}
	require.Equal(t, []string{"orders"}, partitionsOf(c, "g"))

	f.set("later", 2)
	next, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: a.MemberID, MemberEpoch: a.MemberEpoch,
		Topics: []string{"later"}, Owned: a.Partitions})
	require.NoError(t, err)
	require.Equal(t, []string{"later"}, partitionsOf(c, "g"), "orders is nobody's subscription now")
	settle(t, c, next)
}

// Timeouts do not wait for a call to touch the group: a group whose
// members all stopped heartbeating is forgotten by the sweep, its id free
// for either protocol and its series gone, and the sweep's goroutine ends
// with the coordinator's last group (the bubble would not end otherwise).
func TestConsumerSweepForgetsIdleGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewRegistry()
		c := NewConsumerCoordinator(ConsumerConfig{Registry: r, Topics: (&fakeTopics{counts: map[string]int32{"orders": 1}}).lookup})
		join(t, c, "orders")
		time.Sleep(2 * DefaultSessionTimeout)
		c.mu.Lock()
		n := len(c.groups)
		c.mu.Unlock()
		require.Zero(t, n)
		_, ok := r.Protocol("g")
		require.False(t, ok)
	})
}

// A coordinator keeps at most MaxGroups groups: a join that would start
// one more is ErrTooManyGroups, in either protocol; a group that empties
// makes room.
func TestConsumerMaxGroups(t *testing.T) {
	c := NewConsumerCoordinator(ConsumerConfig{MaxGroups: 2, Topics: (&fakeTopics{counts: map[string]int32{"orders": 1}}).lookup})
	t.Cleanup(c.Close)
	var first Assignment
	for i, g := range []string{"g1", "g2"} {
		a, err := c.Heartbeat(context.Background(), g, Heartbeat{Topics: []string{"orders"}})
		require.NoError(t, err)
		if i == 0 {
			first = a
		}
	}
	_, err := c.Heartbeat(context.Background(), "g3", Heartbeat{Topics: []string{"orders"}})
	require.ErrorIs(t, err, ErrTooManyGroups)
	_, err = c.Heartbeat(context.Background(), "g1", Heartbeat{MemberID: first.MemberID, MemberEpoch: -1})
	require.NoError(t, err)
	_, err = c.Heartbeat(context.Background(), "g3", Heartbeat{Topics: []string{"orders"}})
	require.NoError(t, err)
}

func TestClassicMaxGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, func(c *ClassicConfig) { c.MaxGroups = 1 })
		f.joinAlone(t)
		other := joinReq("")
		other.Group = "other"
		other.RequireKnownMemberID = true
		require.ErrorIs(t, answered(t, f.join(other)).err, ErrTooManyGroups, "not even a member id is given out")
	})
}

// MaxMembers, the one bound of both protocols, at its real value: the
// thousandth member of a consumer group joins, the next is ErrGroupFull;
// a classic group counts the member ids it gave out. (The consumer group
// is filled to 999 members directly, so that the assignor does not run a
// thousand times.)
func TestConsumerMaxMembers(t *testing.T) {
	c, _ := newCoordinator(t)
	join(t, c, "orders")
	c.mu.Lock()
	g := c.groups["g"]
	for i := len(g.members); i < MaxMembers-1; i++ {
		id := fmt.Sprintf("filler-%d", i)
		g.members[id] = &consumerMember{id: id, topics: []string{"orders"}, assigned: partSet{}, owned: partSet{},
			deadline: time.Now().Add(time.Hour)}
	}
	c.mu.Unlock()
	join(t, c, "orders")
	_, err := c.Heartbeat(context.Background(), "g", Heartbeat{Topics: []string{"orders"}})
	memberErr(t, err, ErrGroupFull)
}

func TestClassicMaxMembersDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		req := joinReq("")
		req.RequireKnownMemberID = true
		for range MaxMembers {
			_, err := f.c.Join(context.Background(), req)
			require.ErrorIs(t, err, ErrMemberIDRequired)
		}
		_, err := f.c.Join(context.Background(), req)
		require.ErrorIs(t, err, ErrGroupFull)
	})
}

// A Kafka request's client id may be 32 KiB: the coordinator keeps its
// first MaxClientID bytes, for the description and as the member id's
// prefix.
func TestClassicClientIDClipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		req := joinReq("")
		req.ClientID = strings.Repeat("c", 32<<10)
		got := answered(t, f.join(req))
		require.NoError(t, got.err)
		require.Equal(t, strings.Repeat("c", MaxClientID)+"-", got.res.MemberID[:MaxClientID+1])
		require.Len(t, got.res.MemberID, MaxClientID+37)
		d, ok := f.c.Describe("g")
		require.True(t, ok)
		require.Len(t, d.Members[0].ClientID, MaxClientID)
	})
}

// A member cannot hold the others' joins for longer than the longest
// session the coordinator grants: its rebalance timeout is capped at
// ClassicConfig.MaxSessionTimeout. Time is synctest's.
func TestClassicRebalanceTimeoutCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, func(c *ClassicConfig) { c.MaxSessionTimeout = time.Minute })
		req := joinReq("")
		req.RebalanceTimeout = 24 * time.Hour
		first := answered(t, f.join(req))
		require.NoError(t, first.err)
		f.syncLeader(t, first.res, nil)

		start := time.Now()
		bJoin := f.join(joinReq(""))
		for range 20 { // A heartbeats but never joins again: B waits
			waiting(t, bJoin)
			time.Sleep(session / 2)
			if time.Since(start) >= time.Minute {
				break
			}
			require.ErrorIs(t, f.heartbeat(first.res), ErrRebalanceInProgress)
		}
		b := answered(t, bJoin)
		require.NoError(t, b.err)
		require.Equal(t, time.Minute, time.Since(start), "a minute, not a day")
		require.Len(t, b.res.Members, 1, "A was removed")
	})
}
