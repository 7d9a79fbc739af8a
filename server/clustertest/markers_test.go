package clustertest_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// In cluster mode a transaction marker written through any node reaches
// the partition's leader, and a read_committed read through any node —
// forwarded to the leader's process — stops at the same last stable
// offset and is told of the same aborted transactions; a stale epoch's
// marker is refused with its type kept across the transport.
func TestClustertestMarkersAndStableReadsAcrossNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clustertest.Start(t, 3, clustertest.Options{FailoverAfter: failoverAfter})
		require.NoError(t, c.Via(1).CreateTopic("orders", 1, 3))
		st, err := c.Via(1).Status("orders", 0)
		require.NoError(t, err)
		other := 1 + st.Leader%3
		ctx := context.Background()

		txn := func(id int64, seq int32, n int) []topic.Message {
			msgs := make([]topic.Message, n)
			for i := range msgs {
				r := envelope.Record{Value: fmt.Appendf(nil, "%d-%d", id, int(seq)+i), HasProducer: true, Transactional: true,
					Producer: envelope.Producer{ID: id, Sequence: seq + int32(i)}}
				msgs[i] = topic.Message{Payload: envelope.Payload(r)}
			}
			return msgs
		}
		_, err = cluster.NewProducer(c.Via(other), "orders").SendBatchTo(0, txn(5, 0, 2)) // 0, 1
		require.NoError(t, err)
		_, err = cluster.NewProducer(c.Via(other), "orders").SendBatchTo(0, txn(6, 0, 1)) // 2
		require.NoError(t, err)
		for via := 1; via <= 3; via++ {
			r, err := c.Via(via).ReadStable("orders", 0, 0, 100)
			require.NoError(t, err, "node %d", via)
			require.Equal(t, uint64(0), r.LastStable, "node %d", via)
			require.Empty(t, r.Records, "node %d", via)
		}
		require.NoError(t, c.Via(other).WriteTxnMarker(ctx, "orders", 0, 5, 0, false))    // 3
		require.NoError(t, c.Via(st.Leader).WriteTxnMarker(ctx, "orders", 0, 6, 0, true)) // 4
		for via := 1; via <= 3; via++ {
			r, err := c.Via(via).ReadStable("orders", 0, 0, 100)
			require.NoError(t, err, "node %d", via)
			require.Equal(t, uint64(5), r.LastStable, "node %d", via)
			require.Len(t, r.Records, 5, "node %d", via)
			require.Equal(t, []cluster.AbortedTxn{{ProducerID: 5, FirstOffset: 0}}, r.Aborted, "node %d", via)
		}
		err = c.Via(other).WriteTxnMarker(ctx, "orders", 0, 6, 0, true)
		require.NoError(t, err, "a marker of the same epoch again changes nothing")
		require.NoError(t, c.Via(other).WriteTxnMarker(ctx, "orders", 0, 6, 3, false))
		err = c.Via(other).WriteTxnMarker(ctx, "orders", 0, 6, 1, true)
		require.ErrorIs(t, err, cluster.ErrInvalidProducerEpoch, "a fenced epoch's marker, refused at the leader")

		// A versioned marker overtaken by a newer one, sent through a
		// node that does not lead: answered as written, stored nowhere.
		require.NoError(t, c.Via(other).WriteTxnMarkerAt(ctx, "orders", 0, 5, 0, false, 9))
		hw, err := c.Via(other).HighWatermark("orders", 0)
		require.NoError(t, err)
		require.NoError(t, c.Via(other).WriteTxnMarkerAt(ctx, "orders", 0, 5, 0, true, 8), "a late marker of an earlier decision")
		after, err := c.Via(other).HighWatermark("orders", 0)
		require.NoError(t, err)
		require.Equal(t, hw, after, "stored nothing")
	})
}
