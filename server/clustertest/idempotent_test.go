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

// producerBatch is n records of producer id at epoch 0 from sequence seq.
func producerBatch(id int64, seq int32, n int) []topic.Message {
	msgs := make([]topic.Message, n)
	for i := range msgs {
		r := envelope.Record{Value: fmt.Appendf(nil, "%d-%d", id, int(seq)+i), HasProducer: true,
			Producer: envelope.Producer{ID: id, Sequence: seq + int32(i)}}
		msgs[i] = topic.Message{Payload: envelope.Payload(r)}
	}
	return msgs
}

// In cluster mode an idempotent producer's batch sent again through any
// node — forwarded to the leader's process — is answered with its first
// offsets and stored once; the rules' refusals keep their type across
// the internal transport; and after the leader is cut off and the
// partition failed over, the new leader knows the producer from its log.
func TestClustertestIdempotentAcrossNodesAndFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clustertest.Start(t, 3, clustertest.Options{FailoverAfter: failoverAfter})
		require.NoError(t, c.Via(1).CreateTopic("orders", 1, 3))
		st, err := c.Via(1).Status("orders", 0)
		require.NoError(t, err)
		old := st.Leader
		a, b := 1+old%3, 1+(old+1)%3
		id, err := c.Via(a).NewProducerID(context.Background())
		require.NoError(t, err)
		other, err := c.Via(b).NewProducerID(context.Background())
		require.NoError(t, err)
		require.NotEqual(t, id, other, "ids are unique across nodes")

		send := func(via int, msgs []topic.Message) ([]uint64, error) {
			res, err := cluster.NewProducer(c.Via(via), "orders").SendBatchTo(0, msgs)
			out := make([]uint64, len(res))
			for i, r := range res {
				out[i] = r.Offset
			}
			return out, err
		}
		got, err := send(a, producerBatch(id, 0, 2))
		require.NoError(t, err)
		require.Equal(t, []uint64{0, 1}, got)
		for _, via := range []int{a, b, old} {
			got, err = send(via, producerBatch(id, 0, 2))
			require.NoError(t, err, "sent again through node %d", via)
			require.Equal(t, []uint64{0, 1}, got, "through node %d", via)
		}
		_, err = send(a, producerBatch(id, 7, 1))
		require.ErrorIs(t, err, cluster.ErrOutOfOrderSequence, "a refusal keeps its type from the leader's node")

		c.Isolate(old)
		for _, via := range []int{a, b} {
			c.Await(fmt.Sprintf("a new leader, as node %d knows", via), func() (bool, string) {
				st, err := c.Via(via).Status("orders", 0)
				if err != nil {
					return false, err.Error()
				}
				return st.Leader != old, fmt.Sprintf("leader %d", st.Leader)
			})
		}
		got, err = send(a, producerBatch(id, 0, 2))
		require.NoError(t, err)
		require.Equal(t, []uint64{0, 1}, got, "the new leader knows the batch")
		got, err = send(b, producerBatch(id, 2, 1))
		require.NoError(t, err)
		require.Equal(t, []uint64{2}, got)
		c.Heal()
		recs, err := c.Via(a).ReadCommitted("orders", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, recs, 3, "each record stored once")
	})
}
