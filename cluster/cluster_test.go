package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// docs/design.md § Placement: placement is deterministic, computed once,
// persisted and never recomputed; reopening restores it.
func TestClusterCreateTopicPlacementAndReopen(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	want := map[int][2]int{0: {1, 2}, 1: {2, 3}, 2: {3, 1}}
	check := func(c *Cluster) {
		for p, lf := range want {
			st, err := c.Status("orders", p)
			require.NoError(t, err)
			require.Equal(t, lf[0], st.Leader)
			require.Equal(t, []int{lf[1]}, st.Followers)
			require.Len(t, st.Active, 2)
		}
		info, err := c.Topic("orders")
		require.NoError(t, err)
		require.Equal(t, TopicInfo{Name: "orders", PartitionCount: 3, ReplicationFactor: 2}, info)
	}
	check(c)
	before := c.Metadata()

	// Every replica is a plain log in its broker's own directory, and a
	// broker holds nothing for partitions it is not assigned.
	for p, lf := range want {
		for id := 1; id <= 3; id++ {
			_, err := os.Stat(replicaPath(root, id, "orders", p))
			if id == lf[0] || id == lf[1] {
				require.NoError(t, err)
			} else {
				require.True(t, os.IsNotExist(err), "broker %d must hold nothing of partition %d", id, p)
			}
		}
	}
	for path := range snapshot(t, root) {
		rel, err := filepath.Rel(root, path)
		require.NoError(t, err)
		require.True(t, rel == MetaFileName || strings.HasPrefix(rel, "broker-00000") || strings.HasPrefix(rel, "journal"), rel)
	}

	c2 := reopen(t, c, root, 3)
	check(c2)
	require.Equal(t, before, c2.Metadata())
	require.Equal(t, []TopicInfo{{Name: "orders", PartitionCount: 3, ReplicationFactor: 2}}, c2.Topics())
}

// docs/design.md § Invariants, 4: invalid input returns an error and leaves
// every file as it was; 1 <= rf <= brokers.
func TestClusterCreateTopicRejectsBadInput(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("existing", 1, 1))
	before := snapshot(t, root)
	cases := []struct {
		name       string
		topic      string
		partitions int
		rf         int
		want       error
	}{
		{"bad name", "../escape", 1, 1, topic.ErrInvalidName},
		{"empty name", "", 1, 1, topic.ErrInvalidName},
		{"zero partitions", "t", 0, 1, ErrInvalidPartitionCount},
		{"rf zero", "t", 1, 0, ErrInvalidReplicationFactor},
		{"rf above brokers", "t", 1, 4, ErrInvalidReplicationFactor},
		{"exists", "existing", 1, 1, ErrTopicExists},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, c.CreateTopic(tc.topic, tc.partitions, tc.rf), tc.want)
			require.Equal(t, before, snapshot(t, root))
		})
	}
}

// An identical re-create and a conflicting one are told apart, so an API can
// answer the second with a conflict.
func TestClusterCreateTopicExists(t *testing.T) {
	c, _ := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 2, 2))
	var te *TopicExistsError
	require.ErrorAs(t, c.CreateTopic("orders", 2, 2), &te)
	require.True(t, te.SameSettings)
	require.ErrorAs(t, c.CreateTopic("orders", 3, 2), &te)
	require.False(t, te.SameSettings)
	require.Equal(t, 2, te.PartitionCount)
}

// A replica can only be created on an available broker; nothing is written
// when one placed broker is missing.
func TestClusterCreateTopicNeedsPlacedBrokers(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.StopBroker(2))
	before := snapshot(t, root)
	require.ErrorIs(t, c.CreateTopic("orders", 3, 3), ErrBrokerUnavailable)
	require.Equal(t, before, snapshot(t, root))
	_, err := c.Topic("orders")
	require.ErrorIs(t, err, ErrUnknownTopic)
}

// docs/design.md § Unavailable brokers: a broker is unavailable from Close()
// until a new Broker with its id is registered.
func TestClusterRegisterBroker(t *testing.T) {
	c, root := newCluster(t, 2)
	require.Equal(t, []BrokerInfo{{ID: 1, Available: true}, {ID: 2, Available: true}}, c.Brokers())

	dup, err := OpenBroker(1, root)
	require.NoError(t, err)
	require.ErrorIs(t, c.RegisterBroker(dup), ErrBrokerRegistered)

	require.NoError(t, c.StopBroker(1))
	require.NoError(t, c.StopBroker(1), "stopping twice is harmless")
	require.Equal(t, []BrokerInfo{{ID: 1, Available: false}, {ID: 2, Available: true}}, c.Brokers())
	require.NoError(t, c.RegisterBroker(dup), "a new instance replaces a closed one")
	require.Equal(t, []BrokerInfo{{ID: 1, Available: true}, {ID: 2, Available: true}}, c.Brokers())

	closed, err := OpenBroker(3, root)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.ErrorIs(t, c.RegisterBroker(closed), ErrBrokerUnavailable)

	elsewhere, err := OpenBroker(3, t.TempDir())
	require.NoError(t, err)
	defer elsewhere.Close()
	require.ErrorIs(t, c.RegisterBroker(elsewhere), ErrBrokerRoot)

	_, err = OpenBroker(0, root)
	require.ErrorIs(t, err, ErrInvalidBrokerID)
	require.ErrorIs(t, c.StopBroker(9), ErrUnknownBroker)
	_, err = c.StartBroker(2)
	require.ErrorIs(t, err, ErrBrokerRegistered)

	// A new id joins cluster.meta before RegisterBroker returns.
	_, err = c.StartBroker(3)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, c.Metadata().Brokers)
	c2 := reopen(t, c, root, 0)
	require.Equal(t, []BrokerInfo{{ID: 1, Available: false}, {ID: 2, Available: false}, {ID: 3, Available: false}}, c2.Brokers())
}

// After Close every operation is refused.
func TestClusterClosed(t *testing.T) {
	c, _ := newCluster(t, 1)
	require.NoError(t, c.CreateTopic("t", 1, 1))
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	_, err := NewProducer(c, "t").Send(nil, []byte("x"))
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, c.CreateTopic("u", 1, 1), ErrClosed)
}
