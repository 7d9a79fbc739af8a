package group

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// A coordinator that starts after another withholds only the partitions
// a member of the one before could still be reading, until that member's
// saved lease ends; everything else is assigned at once
// (docs/groups.md § Restarts and a new coordinator).

// memLeases is the store of saved leases (ConsumerConfig.Save) in
// memory: it survives the coordinators that write it, as the server's
// store survives a restart.
type memLeases struct {
	mu     sync.Mutex
	states map[string][]byte
	writes int
	fail   error
}

func (s *memLeases) save(group string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.writes++
	if data == nil {
		delete(s.states, group)
		return nil
	}
	s.states[group] = data
	return nil
}

func (s *memLeases) snapshot() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.states)
}

// leasesOf reads back group's saved leases.
func (s *memLeases) leasesOf(t *testing.T, group string) (Leases, bool) {
	t.Helper()
	data, ok := s.snapshot()[group]
	if !ok {
		return Leases{}, false
	}
	l, err := ParseLeases(data)
	require.NoError(t, err)
	return l, true
}

// savingCoordinator is a coordinator over store, restored from it: a
// server started (again) on the same data.
func savingCoordinator(t *testing.T, store *memLeases) *ConsumerCoordinator {
	t.Helper()
	f := &fakeTopics{counts: map[string]int32{"orders": 4}}
	c := NewConsumerCoordinator(ConsumerConfig{Topics: f.lookup, Save: store.save})
	t.Cleanup(c.Close)
	require.NoError(t, c.Restore(store.snapshot(), 0))
	return c
}

func newMemLeases() *memLeases { return &memLeases{states: map[string][]byte{}} }

// A new group, and a group whose members all left, are assigned every
// partition at the first heartbeat after a restart: well within one
// heartbeat interval, where the window of old withheld them for a whole
// session timeout.
func TestConsumerRestoreNewGroupAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemLeases()
		before := savingCoordinator(t, store)
		a := join(t, before, "orders")
		require.Len(t, a.Partitions[0].Partitions, 4)
		_, err := before.Heartbeat(context.Background(), "g", Heartbeat{MemberID: a.MemberID, MemberEpoch: -1})
		require.NoError(t, err)
		_, saved := store.leasesOf(t, "g")
		require.False(t, saved, "a group whose members all left keeps no lease")
		_, err = before.Heartbeat(context.Background(), "busy", Heartbeat{MemberEpoch: 0, Topics: []string{"orders"}})
		require.NoError(t, err)
		before.Close() // a crash: nothing more is saved

		after := savingCoordinator(t, store)
		start := time.Now()
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, join(t, after, "orders").Partitions)
		fresh, err := after.Heartbeat(context.Background(), "new", Heartbeat{MemberEpoch: 0, Topics: []string{"orders"}})
		require.NoError(t, err)
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, fresh.Partitions)
		require.Less(t, time.Since(start), DefaultHeartbeatInterval)
	})
}

// A saved lease that has not ended withholds its member's partitions,
// and only those, until its end: the member's last deadline plus the
// headroom at most. A member long-polling is answered the moment it ends.
func TestConsumerRestoreLiveLeaseWithholds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemLeases()
		before := savingCoordinator(t, store)
		a := join(t, before, "orders")
		b := join(t, before, "orders")
		ms := settle(t, before, a, b)
		a, b = ms[0], ms[1]
		_, err := before.Heartbeat(context.Background(), "g", Heartbeat{MemberID: b.MemberID, MemberEpoch: -1})
		require.NoError(t, err)
		lastBeat := time.Now()
		held := a.Partitions // a's, not yet the partitions b released
		l, ok := store.leasesOf(t, "g")
		require.True(t, ok)
		require.Len(t, l.Members, 1)
		require.Equal(t, a.MemberID, l.Members[0].MemberID)
		end := l.Members[0].End
		require.False(t, end.Before(lastBeat.Add(DefaultSessionTimeout)), "a lease never ends before its member's deadline")
		require.False(t, end.After(lastBeat.Add(DefaultSessionTimeout*5/4)), "nor much after")
		before.Close()

		time.Sleep(10 * time.Second)
		after := savingCoordinator(t, store)
		c := join(t, after, "orders")
		free := setOf([]TopicPartitions{tps("orders", 0, 1, 2, 3)})
		for k := range setOf(held) {
			delete(free, k)
		}
		require.Equal(t, free.list(), c.Partitions, "only a's partitions wait")
		for time.Now().Before(end) {
			next, err := after.Heartbeat(context.Background(), "g", Heartbeat{MemberID: c.MemberID, MemberEpoch: c.MemberEpoch,
				Owned: c.Partitions, MaxWait: DefaultHeartbeatInterval})
			require.NoError(t, err)
			if len(next.Partitions[0].Partitions) == 4 {
				require.True(t, end.Equal(time.Now()), "answered when a's lease ends, not at %v", time.Now())
			} else {
				require.True(t, time.Now().Before(end), "nothing of a's before its lease ends")
			}
			c = next
		}
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, c.Partitions)
	})
}

// A lease that ended before the coordinator started withholds nothing,
// and Restore removes it from the store.
func TestConsumerRestoreEndedLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemLeases()
		before := savingCoordinator(t, store)
		join(t, before, "orders")
		before.Close()

		time.Sleep(DefaultSessionTimeout*5/4 + time.Second)
		after := savingCoordinator(t, store)
		_, saved := store.leasesOf(t, "g")
		require.False(t, saved, "an ended lease is removed")
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, join(t, after, "orders").Partitions)
	})
}

// A member of the coordinator before that joins again under its id says
// what it holds: it keeps what it claims, and the rest of its old lease
// withholds nothing. The group epoch counts on from the saved one.
func TestConsumerRestoreRejoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemLeases()
		before := savingCoordinator(t, store)
		k, err := before.Heartbeat(context.Background(), "g", Heartbeat{MemberID: "keeper", MemberEpoch: 0, Topics: []string{"orders"}})
		require.NoError(t, err)
		require.Len(t, k.Partitions[0].Partitions, 4)
		before.Close()

		after := savingCoordinator(t, store)
		other := join(t, after, "orders")
		require.Empty(t, other.Partitions, "everything is keeper's until it joins again or its lease ends")
		back, err := after.Heartbeat(context.Background(), "g", Heartbeat{MemberID: "keeper", MemberEpoch: 0, Topics: []string{"orders"},
			Owned: []TopicPartitions{tps("orders", 1)}})
		require.NoError(t, err)
		require.Greater(t, back.MemberEpoch, k.MemberEpoch, "the group epoch counts on from the saved one")
		ms := settle(t, after, back, other)
		require.Contains(t, ms[0].Partitions[0].Partitions, int32(1), "keeper keeps what it claimed")
		require.Len(t, ms[1].Partitions[0].Partitions, 2, "the rest moves at once")
	})
}

// Leases are saved when members come and go and when what a member holds
// grows, but a heartbeat that changes nothing writes only when the
// member's deadline passes its saved lease end: about once per headroom
// (a quarter of the session timeout). The saved end is never before the
// member's deadline.
func TestConsumerRestoreSaveRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemLeases()
		c := savingCoordinator(t, store)
		a := join(t, c, "orders")
		writes := store.writes
		const beats = 24 // two minutes of heartbeats
		for range beats {
			time.Sleep(DefaultHeartbeatInterval)
			a = beat(t, c, a, a.Partitions...)
			l, ok := store.leasesOf(t, "g")
			require.True(t, ok)
			require.False(t, l.Members[0].End.Before(time.Now().Add(DefaultSessionTimeout)), "saved end before the deadline")
		}
		span := beats * DefaultHeartbeatInterval
		require.LessOrEqual(t, store.writes-writes, int(span/(DefaultSessionTimeout/4))+1)
		require.Positive(t, store.writes-writes)
	})
}

// A heartbeat whose leases cannot be saved is not answered: the member
// is not told of a partition the next coordinator would not withhold.
func TestConsumerRestoreSaveFails(t *testing.T) {
	store := newMemLeases()
	c := savingCoordinator(t, store)
	store.fail = errors.New("disk full")
	_, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberEpoch: 0, Topics: []string{"orders"}})
	require.ErrorIs(t, err, ErrNotSaved)
}

// Leases that cannot be read withhold their whole group for a session
// timeout, as a coordinator without saved leases would; Restore says why.
func TestConsumerRestoreUnreadable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemLeases()
		store.states["g"] = []byte("{not json")
		f := &fakeTopics{counts: map[string]int32{"orders": 4}}
		c := NewConsumerCoordinator(ConsumerConfig{Topics: f.lookup, Save: store.save})
		t.Cleanup(c.Close)
		require.ErrorIs(t, c.Restore(store.snapshot(), 0), ErrInvalidLeases)
		a := join(t, c, "orders")
		require.Empty(t, a.Partitions)
		for range DefaultSessionTimeout / DefaultHeartbeatInterval {
			require.Empty(t, a.Partitions, "withheld for a session timeout")
			time.Sleep(DefaultHeartbeatInterval)
			a = beat(t, c, a, a.Partitions...)
		}
		require.Len(t, a.Partitions[0].Partitions, 4)
		_, err := c.Heartbeat(context.Background(), "other", Heartbeat{MemberEpoch: 0, Topics: []string{"orders"}})
		require.NoError(t, err)
	})
}

// A Restore for a Withhold that a Clear or another Withhold followed
// changes nothing: it would end the later window.
func TestConsumerRestoreStaleTicket(t *testing.T) {
	c, _ := newCoordinator(t)
	ticket := c.Withhold(time.Hour)
	c.Clear()
	c.Withhold(time.Hour)
	require.NoError(t, c.Restore(nil, ticket))
	require.Empty(t, join(t, c, "orders").Partitions, "the window is still open")
}
