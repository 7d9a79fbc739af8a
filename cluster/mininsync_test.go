package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// min.insync.replicas (leader.go, checkMinInsync): with 2 on a topic of
// replication factor 3, writes go on with one broker down once it has
// left the active set, are refused before anything is appended with two
// down, and resume when one returns and is caught up. The setting is read
// at every write: altering it takes effect at once.
func TestMinInsyncReplicas(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 3, map[string]string{topic.MinInsyncReplicasKey: "2"}))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 2)

	require.NoError(t, c.StopBroker(3))
	_, err := c.Deactivate("orders", 0, 3)
	require.NoError(t, err)
	res, err := prod.Send(nil, []byte("two active"))
	require.NoError(t, err, "two active replicas are enough")
	require.Equal(t, uint64(2), res.Offset)

	require.NoError(t, c.StopBroker(2))
	_, err = c.Deactivate("orders", 0, 2)
	require.NoError(t, err)
	before := snapshot(t, root)
	_, err = prod.Send(nil, []byte("refused"))
	var ne *NotEnoughReplicasError
	require.ErrorAs(t, err, &ne)
	require.Equal(t, NotEnoughReplicasError{Topic: "orders", Partition: 0, Active: 1, MinInsync: 2}, *ne)
	require.ErrorIs(t, err, ErrNotEnoughReplicas)
	require.Contains(t, err.Error(), "min.insync.replicas=2")
	require.Equal(t, before, snapshot(t, root), "nothing is appended")
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, u64(3), st.Replicas[0].LogEnd)
	require.Equal(t, uint64(3), st.HighWatermark)

	// Altered to 1, the lone leader takes writes; back to 2, it refuses.
	_, err = c.AlterTopicConfig("orders", map[string]string{topic.MinInsyncReplicasKey: "1"}, nil)
	require.NoError(t, err)
	res, err = prod.Send(nil, []byte("alone"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), res.Offset)
	_, err = c.AlterTopicConfig("orders", map[string]string{topic.MinInsyncReplicasKey: "2"}, nil)
	require.NoError(t, err)
	_, err = prod.Send(nil, []byte("refused again"))
	require.ErrorIs(t, err, ErrNotEnoughReplicas)

	// Broker 2 returns and is caught up: two active again, writes resume.
	_, err = c.StartBroker(2)
	require.NoError(t, err)
	_, err = c.RecoverReplica("orders", 0, 2)
	require.NoError(t, err)
	res, err = prod.Send(nil, []byte("resumed"))
	require.NoError(t, err)
	require.Equal(t, uint64(4), res.Offset)
	recs, err := c.ReadCommitted("orders", 0, 0, 10)
	require.NoError(t, err)
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Payload))
	}
	require.Equal(t, []string{"two active", "alone", "resumed"}, got[2:])
}

// A min.insync.replicas above the replication factor is taken, as Kafka
// takes it, and refuses every write to the topic until it is lowered.
func TestMinInsyncReplicasAboveReplicationFactor(t *testing.T) {
	c, _ := newCluster(t, 2)
	require.NoError(t, c.CreateTopicWithConfig("orders", 2, 2, map[string]string{topic.MinInsyncReplicasKey: "3"}))
	prod := NewProducer(c, "orders")
	for p := range 2 {
		_, err := prod.SendBatchTo(p, []topic.Message{{Payload: []byte("x")}})
		var ne *NotEnoughReplicasError
		require.ErrorAs(t, err, &ne)
		require.Equal(t, NotEnoughReplicasError{Topic: "orders", Partition: p, Active: 2, MinInsync: 3}, *ne)
	}
	_, err := c.AlterTopicConfig("orders", nil, []string{topic.MinInsyncReplicasKey})
	require.NoError(t, err)
	_, err = prod.SendBatchTo(1, []topic.Message{{Payload: []byte("x")}})
	require.NoError(t, err)
}
