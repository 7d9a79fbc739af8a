package kafka_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// endingTxn is a backend whose LoadOffset, once armed, lets the
// transaction it names commit right after reading the offset: an
// OffsetFetch racing the end of a transaction that holds the offset.
type endingTxn struct {
	kafka.Cluster
	armed atomic.Bool
	end   func()
}

func (e *endingTxn) LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error) {
	off, ok, err := e.Cluster.LoadOffset(consumerID, topicName, partition)
	if e.armed.CompareAndSwap(true, false) {
		e.end()
	}
	return off, ok, err
}

// TestKafkaOffsetFetchStableRacesCommit: KIP-447 § OffsetFetch
// require_stable — a partition whose offset an open transaction holds is
// UNSTABLE_OFFSET_COMMIT, so that a consumer taking the partition over
// never starts from the offset before the transaction's. A transaction
// that commits while the answer is being made must not leave it with the
// offset from before: the answer is either unstable or the transaction's
// offset.
func TestKafkaOffsetFetchStableRacesCommit(t *testing.T) {
	hook := &endingTxn{}
	f := startOver(t, func(kc kafka.Cluster) kafka.Cluster { hook.Cluster = kc; return hook }, 1, 1, 1)
	ctx := context.Background()
	_, err := cluster.NewProducer(f.c, "events").SendBatchTo(0, []topic.Message{{Payload: []byte("a")}, {Payload: []byte("b")}, {Payload: []byte("c")}})
	require.NoError(t, err)
	require.NoError(t, f.c.CommitOffset("g", "events", 0, 1))
	pid, epoch, err := f.c.InitTransactions(ctx, "tx", time.Minute, -1, -1)
	require.NoError(t, err)
	require.NoError(t, f.c.AddOffsetsToTxn(ctx, "tx", pid, epoch, "g"))
	require.NoError(t, f.c.TxnOffsetCommit(ctx, "tx", pid, epoch, []cluster.TxnOffset{{Group: "g", Topic: "events", Partition: 0, Offset: 3}}))
	ended := make(chan error, 1) // the hook runs on the handler's goroutine
	hook.end = func() { ended <- f.c.EndTxn(ctx, "tx", pid, epoch, true) }
	hook.armed.Store(true)

	got := fetchStable(t, f.dial(t, 1), "g", 0)
	select {
	case err := <-ended:
		require.NoError(t, err)
	default:
		require.Fail(t, "the transaction did not end during the fetch")
	}
	off, _, err := f.c.LoadOffset("g", "events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(3), off, "and committed its offset")
	if got.ErrorCode == 0 {
		require.EqualValues(t, 3, got.Offset, "a stable answer is the transaction's offset, never the one before it")
	} else {
		require.Equal(t, kerr.UnstableOffsetCommit.Code, got.ErrorCode)
	}
}
