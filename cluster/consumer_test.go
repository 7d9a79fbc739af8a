package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
)

func fetchPayloads(t *testing.T, cons *client.Consumer) []string {
	t.Helper()
	recs, err := cons.Fetch(100)
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Payload))
	}
	return out
}

// docs/phase-4-replication.md: the cluster consumer has the phase-3 semantics, reads
// from the current leader and never past the high watermark; and
// it does not see an unacknowledged record until catch-up makes it
// replicated.
func TestConsumerReplicatedPartition(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := NewProducer(c, "orders")
	for _, p := range []string{"a", "b"} {
		_, err := prod.Send(nil, []byte(p))
		require.NoError(t, err)
	}
	cons, err := c.NewConsumer("worker", "orders", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, fetchPayloads(t, cons))
	require.NoError(t, cons.Commit())

	require.NoError(t, c.StopBroker(2))
	_, err = prod.Send(nil, []byte("c"))
	require.ErrorIs(t, err, ErrReplicationFailed)
	require.Empty(t, fetchPayloads(t, cons), "the unacknowledged record is above the high watermark")
	require.Equal(t, uint64(2), cons.Position())

	_, err = c.StartBroker(2)
	require.NoError(t, err)
	_, err = c.CatchUp("orders", 0, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, fetchPayloads(t, cons))

	// Committed progress lives under the cluster root and survives reopen.
	c = reopen(t, c, root, 2)
	cons, err = c.NewConsumer("worker", "orders", 0)
	require.NoError(t, err)
	off, ok := cons.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(2), off)
	require.Equal(t, []string{"c"}, fetchPayloads(t, cons))
	cons.Seek(0)
	require.Equal(t, []string{"a", "b", "c"}, fetchPayloads(t, cons))
	require.NoError(t, cons.Commit())

	// After a failover the same consumer reads from the new leader.
	require.NoError(t, c.StopBroker(1))
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	_, err = NewProducer(c, "orders").Send(nil, []byte("d"))
	require.NoError(t, err)
	require.Equal(t, []string{"d"}, fetchPayloads(t, cons))

	_, err = c.NewConsumer("worker", "orders", 7)
	require.Error(t, err)
	_, err = c.NewConsumer("worker", "nope", 0)
	require.ErrorIs(t, err, ErrUnknownTopic)
}
