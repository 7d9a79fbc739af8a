package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// SendBatchTo writes to the partition named, whatever the keys say, as one
// batch on every active replica; a partition the topic lacks and an
// oversized payload are refused before anything is written.
func TestProducerSendBatchToOnePartition(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	p := NewProducer(c, "orders")
	key := keyFor(t, 0, 3) // routes to partition 0; sent to 2 anyway
	res, err := p.SendBatchTo(2, []topic.Message{{Key: []byte(key), Payload: []byte("a")}, {Payload: []byte("b")}})
	require.NoError(t, err)
	require.Len(t, res, 2)
	for i, r := range res {
		require.Equal(t, 2, r.Partition)
		require.Equal(t, uint64(i), r.Offset)
		require.Equal(t, "orders", r.Topic)
	}
	require.Equal(t, []string{"a", "b"}, payloads(t, c, "orders", 2))
	require.Empty(t, payloads(t, c, "orders", 0))

	before := snapshot(t, root)
	_, err = p.SendBatchTo(3, []topic.Message{{Payload: []byte("x")}})
	require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
	_, err = p.SendBatchTo(-1, []topic.Message{{Payload: []byte("x")}})
	require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
	_, err = p.SendBatchTo(1, []topic.Message{{Payload: make([]byte, c.MaxPayloadSize()+1)}})
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)
	require.Equal(t, before, snapshot(t, root), "refusals write nothing")

	// A follower that fails the write fails the whole batch.
	follower := c.Metadata().Topics["orders"].Partitions[1].Followers()[0]
	require.NoError(t, c.StopBroker(follower))
	res, err = p.SendBatchTo(1, []topic.Message{{Payload: []byte("c")}, {Payload: []byte("d")}})
	require.ErrorIs(t, err, ErrReplicationFailed)
	require.Len(t, res, 2)
	for _, r := range res {
		require.Equal(t, "orders", r.Topic)
		require.Equal(t, 1, r.Partition)
		require.Empty(t, r.Brokers, "not acknowledged: no placement")
	}
	require.Empty(t, payloads(t, c, "orders", 1), "nothing acknowledged, nothing served")
}

// TestSendBatchToQueuedKeepsOrder: batches queued one after the other
// reach the partition in that order — an idempotent producer's five
// requests in flight keep their sequence numbers in order — and may
// share one append; each wait answers its own batch's offsets.
func TestSendBatchToQueuedKeepsOrder(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	var waits []func() ([]SendResult, error)
	for i := range 20 {
		q := prod.SendBatchToQueued(0, idempotentBatch(7, 0, int32(2*i), 2))
		require.False(t, q.Forwarded, "the leader is in this process")
		waits = append(waits, q.Wait)
	}
	for i, wait := range waits {
		res, err := wait()
		require.NoError(t, err, "batch %d", i)
		require.Equal(t, []uint64{uint64(2 * i), uint64(2*i + 1)}, offsetsOf(res), "batch %d", i)
	}
	_, err := prod.SendBatchToQueued(5, idempotentBatch(7, 0, 40, 1)).Wait()
	require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
}
