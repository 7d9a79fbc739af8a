package group

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// After a restart or a coordinator move the coordinator knows no member,
// while the members of the one before may still read: no partition is
// ever read by two members at once, as
// docs/groups.md § Restarts and a new coordinator
// tells.

// rejoin joins group g as member id, claiming owned.
func rejoin(t *testing.T, c *ConsumerCoordinator, id string, owned ...TopicPartitions) Assignment {
	t.Helper()
	a, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: id, MemberEpoch: 0, Topics: []string{"orders"}, Owned: owned})
	require.NoError(t, err)
	return a
}

// Members that join again claim what they held and keep it; a claim of a
// partition another member holds, of a topic the member does not
// subscribe to, or past the topic's partitions is not granted. While the
// window is open, a partition nobody claims goes to nobody, even to the
// member the target gives it to.
func TestConsumerRestartClaims(t *testing.T) {
	c, _ := newCoordinator(t)
	c.Withhold(time.Hour)
	a := rejoin(t, c, "a", tps("orders", 0, 1), tps("other", 0), tps("orders", 9))
	require.Equal(t, []TopicPartitions{tps("orders", 0, 1)}, a.Partitions, "2 and 3 are withheld")
	b := rejoin(t, c, "b", tps("orders", 1, 2))
	require.Equal(t, []TopicPartitions{tps("orders", 2)}, b.Partitions, "1 is a's")
	a = beat(t, c, a, a.Partitions...)
	require.Equal(t, []TopicPartitions{tps("orders", 0, 1)}, a.Partitions, "a keeps what it claimed: no partition moves")
	b = beat(t, c, b, b.Partitions...)
	require.Equal(t, []TopicPartitions{tps("orders", 2)}, b.Partitions, "3 is nobody's: withheld")
	require.NoError(t, checkConsumer(c, "g", a.MemberID, a.MemberEpoch, "orders", 1))
	memberErr(t, checkConsumer(c, "g", b.MemberID, b.MemberEpoch, "orders", 3), ErrNotOwned)
}

// The window lasts what Withhold was given (the session timeout): a
// member long-polling is answered the moment it ends, with the partitions
// nobody claimed. Without a window (a coordinator whose server started on
// a new data directory) a join is given everything at once. Time is
// synctest's.
func TestConsumerRestartWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCoordinator(t)
		c.Withhold(DefaultSessionTimeout)
		start := time.Now()
		a := rejoin(t, c, "a", tps("orders", 0))
		require.Equal(t, []TopicPartitions{tps("orders", 0)}, a.Partitions)
		for time.Since(start) < DefaultSessionTimeout {
			next, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: a.MemberID, MemberEpoch: a.MemberEpoch,
				Owned: a.Partitions, MaxWait: DefaultHeartbeatInterval})
			require.NoError(t, err)
			if len(next.Partitions[0].Partitions) > 1 {
				require.Equal(t, DefaultSessionTimeout, time.Since(start), "answered when the window ends")
			}
			a = next
		}
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, a.Partitions)
		_, err := c.Heartbeat(context.Background(), "g", Heartbeat{MemberID: a.MemberID, MemberEpoch: -1})
		require.NoError(t, err)

		fresh, _ := newCoordinator(t)
		require.Equal(t, []TopicPartitions{tps("orders", 0, 1, 2, 3)}, join(t, fresh, "orders").Partitions)
	})
}
