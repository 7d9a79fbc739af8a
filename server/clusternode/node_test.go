package clusternode

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// TestNodeClusterServes pins doc.go's "Any node answers" and "Writes":
// three nodes elect a leader and register; a topic created through a
// follower of the metadata group is known everywhere; a write through any
// node is acknowledged by its partition's leader once every active
// replica holds it durably (Brokers [1 2 3]), so every replica log holds
// the same records; a committed read through any node is served by the
// leader below one high watermark.
func TestNodeClusterServes(t *testing.T) {
	c := newTestCluster(t, 3)
	for _, n := range c.running() {
		nodes := n.Nodes()
		require.Len(t, nodes, 3, "node %d", n.ID())
		for i, info := range nodes {
			require.Equal(t, i+1, info.ID, "node %d lists %v", n.ID(), nodes)
			require.Equal(t, c.peers[info.ID], info.Addr, "node %d lists %v", n.ID(), nodes)
			require.Equal(t, fmt.Sprintf("127.0.0.1:%d", 18000+info.ID), info.HTTPAddr)
		}
	}

	const name = "orders"
	c.createTopic(c.follower(), name, 3, 3)
	for _, n := range c.running() {
		info, err := n.Topic(name)
		require.NoError(t, err)
		require.Equal(t, cluster.TopicInfo{Name: name, PartitionCount: 3, ReplicationFactor: 3}, info, "node %d", n.ID())
		require.Equal(t, []cluster.TopicInfo{info}, n.Topics(), "node %d", n.ID())
	}
	// A second creation through another node is refused with the
	// cluster's own error.
	var exists *cluster.TopicExistsError
	require.ErrorAs(t, c.node(3).CreateTopic(name, 3, 3), &exists)
	require.True(t, exists.SameSettings)

	// Writes through each node: one keyed record (the same key, so the
	// same partition wherever it is sent) and one to each partition
	// explicitly.
	sent := map[int][]string{} // partition -> payloads in offset order
	keyed := -1
	for _, n := range c.running() {
		payload := fmt.Sprintf("keyed via %d", n.ID())
		res, err := n.Send(name, nil, []topic.Message{{Key: []byte("customer-7"), Payload: []byte(payload)}})
		require.NoError(t, err, "keyed send through node %d", n.ID())
		require.Len(t, res, 1)
		if keyed == -1 {
			keyed = res[0].Partition
		}
		require.Equal(t, keyed, res[0].Partition, "one key routes to one partition from every node")
		require.Equal(t, uint64(len(sent[keyed])), res[0].Offset)
		require.Equal(t, []int{1, 2, 3}, res[0].Brokers)
		require.Equal(t, partitionOf(t, n, name, keyed).Leader, res[0].LeaderBrokerID)
		sent[keyed] = append(sent[keyed], payload)

		for p := range 3 {
			payload := fmt.Sprintf("p%d via %d", p, n.ID())
			res, err := n.Send(name, &p, []topic.Message{{Payload: []byte(payload)}})
			require.NoError(t, err, "send to %s/%d through node %d", name, p, n.ID())
			require.Len(t, res, 1)
			require.Equal(t, p, res[0].Partition)
			require.Equal(t, uint64(len(sent[p])), res[0].Offset, "%s/%d through node %d", name, p, n.ID())
			require.Equal(t, []int{1, 2, 3}, res[0].Brokers)
			require.Equal(t, partitionOf(t, n, name, p).Leader, res[0].LeaderBrokerID)
			sent[p] = append(sent[p], payload)
		}
	}
	// A partition out of range is refused before anything is written.
	bad := 3
	_, err := c.node(1).Send(name, &bad, []topic.Message{{Payload: []byte("x")}})
	require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)

	for p := range 3 {
		want := readAll(t, c.node(1), name, p)
		require.Equal(t, sent[p], payloads(want), "%s/%d", name, p)
		for i, r := range want {
			require.Equal(t, uint64(i), r.Offset)
		}
		for _, n := range c.running() {
			sameRecords(t, want, readAll(t, n, name, p), "%s/%d read through node %d", name, p, n.ID())
			hw, err := n.HighWatermark(name, p)
			require.NoError(t, err)
			require.Equal(t, uint64(len(want)), hw, "%s/%d high watermark through node %d", name, p, n.ID())
			// Every node's own replica log: every acknowledged record is
			// on every active replica's disk.
			sameRecords(t, want, c.replicaLog(n.ID(), name, p), "node %d's replica log of %s/%d", n.ID(), name, p)

			st, err := n.Status(name, p)
			require.NoError(t, err)
			require.Equal(t, uint64(len(want)), st.HighWatermark, "status of %s/%d through node %d", name, p, n.ID())
			require.Equal(t, []int{1, 2, 3}, st.Active)
		}
		// A read from the middle, bounded.
		recs, err := c.node(2).ReadCommitted(name, p, 1, 1)
		require.NoError(t, err)
		sameRecords(t, want[1:2], recs)
	}
}

// TestNodeOffsets pins the consumer offsets of cluster mode: committed
// through Raft on any node and read on every node; a commit never goes
// backwards (*client.OffsetRegressionError) nor past the partition's high
// watermark (*client.OffsetBeyondEndError). The journal names every
// broker's registration.
func TestNodeOffsets(t *testing.T) {
	c := newTestCluster(t, 3)
	const name = "clicks"
	c.createTopic(c.node(1), name, 2, 3)
	for i := range 5 {
		p := i % 2
		_, err := c.node(i%3+1).Send(name, &p, []topic.Message{{Payload: fmt.Appendf(nil, "click %d", i)}})
		require.NoError(t, err)
	}
	// clicks/0 holds 3 records, clicks/1 holds 2.

	require.NoError(t, c.node(1).CommitOffset("dashboard", name, 0, 2))
	require.NoError(t, c.node(2).CommitOffset("dashboard", name, 1, 1))
	want := []client.CommittedOffset{{Topic: name, Partition: 0, Offset: 2}, {Topic: name, Partition: 1, Offset: 1}}
	waitFor(t, waitLong, "every node lists the committed offsets", func() (bool, string) {
		for _, n := range c.running() {
			got, err := n.ListOffsets("dashboard")
			if err != nil || !slices.Equal(got, want) {
				return false, fmt.Sprintf("node %d: %v, %v", n.ID(), got, err)
			}
		}
		return true, ""
	})
	for _, n := range c.running() {
		off, ok, err := n.LoadOffset("dashboard", name, 0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, uint64(2), off, "node %d", n.ID())
		_, ok, err = n.LoadOffset("nobody", name, 0)
		require.NoError(t, err)
		require.False(t, ok)
	}

	// Backwards, through a node that did not make the commit.
	err := c.node(3).CommitOffset("dashboard", name, 0, 1)
	var regression *client.OffsetRegressionError
	require.ErrorAs(t, err, &regression)
	require.Equal(t, client.OffsetRegressionError{ConsumerID: "dashboard", Topic: name, Partition: 0, Committed: 2, Requested: 1}, *regression)

	// Past the high watermark (3 records: offset 3 is the end, 4 is past it).
	require.NoError(t, c.node(3).CommitOffset("dashboard", name, 0, 3))
	err = c.node(2).CommitOffset("dashboard", name, 0, 4)
	var beyond *client.OffsetBeyondEndError
	require.ErrorAs(t, err, &beyond)
	require.Equal(t, uint64(4), beyond.Requested)
	require.Equal(t, uint64(3), beyond.End)

	// A reset may go backwards.
	require.NoError(t, c.node(2).ResetOffset("dashboard", name, 0, 0))
	off, ok, err := c.node(2).LoadOffset("dashboard", name, 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(0), off)

	// The journal: every broker's registration, on every node.
	for _, n := range c.running() {
		entries, err := n.Journal(0, 0)
		require.NoError(t, err)
		var started []int
		for i, e := range entries {
			require.Equal(t, uint64(i), e.Offset, "journal offsets count from 0")
			if e.Event == cluster.EventBrokerStart {
				started = append(started, e.Broker)
			}
		}
		slices.Sort(started)
		require.Equal(t, []int{1, 2, 3}, started, "node %d's journal: %v", n.ID(), entries)
	}
}

// TestNodeNotInClusterMode pins errors.go: the embedded cluster's manual
// operations are refused with ErrNotInClusterMode, and Open refuses a
// configuration it cannot start with ErrInvalidConfig.
func TestNodeNotInClusterMode(t *testing.T) {
	for _, cfg := range []Config{
		{ID: 0, Peers: map[int]string{0: "127.0.0.1:1"}, DataDir: t.TempDir()},
		{ID: 1, Peers: map[int]string{2: "127.0.0.1:1"}, DataDir: t.TempDir()},
		{ID: 1, Peers: map[int]string{1: "127.0.0.1:1"}},
	} {
		_, err := Open(cfg)
		require.ErrorIs(t, err, ErrInvalidConfig, "%+v", cfg)
	}
	var n Node // the refusals need no running node
	_, err := n.DeleteTopic("t")
	require.ErrorIs(t, err, ErrNotInClusterMode)
	require.ErrorIs(t, n.StopBroker(1), ErrNotInClusterMode)
	require.ErrorIs(t, n.StartBroker(1), ErrNotInClusterMode)
	_, err = n.ReopenBroker(1)
	require.ErrorIs(t, err, ErrNotInClusterMode)
	_, err = n.Failover("t", 0)
	require.ErrorIs(t, err, ErrNotInClusterMode)
	_, err = n.RecoverReplica("t", 0, 1)
	require.ErrorIs(t, err, ErrNotInClusterMode)
	_, err = n.MoveLeader("t", 0, 1)
	require.ErrorIs(t, err, ErrNotInClusterMode)
	require.False(t, errors.Is(err, ErrNoLeader))
}
