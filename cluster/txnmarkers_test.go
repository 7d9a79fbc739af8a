package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic/envelope"
)

// The coordinator's ends as the partitions see them: the markers it
// writes, and the producers they fence.

// stableOf is a stable read of the whole of orders/partition.
func stableOf(t *testing.T, c *Cluster, partition int) StableRead {
	t.Helper()
	r, err := c.ReadStable("orders", partition, 0, 1000)
	require.NoError(t, err)
	return r
}

// lastMarker is the marker at the end of orders/partition.
func lastMarker(t *testing.T, c *Cluster, partition int) envelope.Identity {
	t.Helper()
	hw, err := c.HighWatermark("orders", partition)
	require.NoError(t, err)
	require.Positive(t, hw)
	recs, err := c.ReadCommitted("orders", partition, hw-1, 1)
	require.NoError(t, err)
	id, ok := envelope.IdentityOf(recs[0].Payload)
	require.True(t, ok)
	require.NotEqual(t, envelope.NoMarker, id.Marker, "the last record of orders/%d is a marker", partition)
	return id
}

// Reference: KIP-98 § EndTxn, WriteTxnMarkers. A commit writes a commit
// marker at the producer's epoch into every partition the transaction
// wrote to, and the last stable offset moves past its records; an abort
// writes abort markers, and a read_committed reader is told to skip the
// records.
func TestTxnEndWritesMarkers(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		prod := NewProducer(f.c, "orders")
		pid, epoch := f.init("tx", time.Minute)
		parts := []TxnPartition{{"orders", 0}, {"orders", 2}}
		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, parts))
		for _, p := range parts {
			_, err := prod.SendBatchTo(p.Partition, txnBatch(pid, epoch, 0, 2))
			require.NoError(t, err)
			require.Equal(t, uint64(0), stableOf(t, f.c, p.Partition).LastStable, "the open transaction holds orders/%d", p.Partition)
		}
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true))
		require.Equal(t, TxnCompleteCommit, f.txn("tx").State)
		for _, p := range parts {
			r := stableOf(t, f.c, p.Partition)
			require.Equal(t, uint64(3), r.LastStable, "orders/%d: two records and the marker", p.Partition)
			require.Empty(t, r.Aborted)
			m := lastMarker(t, f.c, p.Partition)
			require.Equal(t, envelope.CommitMarker, m.Marker)
			require.Equal(t, envelope.Producer{ID: pid, Epoch: epoch}, envelope.Producer{ID: m.Producer.ID, Epoch: m.Producer.Epoch})
		}
		hw1, err := f.c.HighWatermark("orders", 1)
		require.NoError(t, err)
		require.Zero(t, hw1, "no marker where the transaction did not write")

		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, parts[:1]))
		_, err = prod.SendBatchTo(0, txnBatch(pid, epoch, 2, 1))
		require.NoError(t, err)
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, false))
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, false), "asked again")
		r := stableOf(t, f.c, 0)
		require.Equal(t, uint64(5), r.LastStable)
		require.Equal(t, []AbortedTxn{{ProducerID: pid, FirstOffset: 3}}, r.Aborted)
		require.Equal(t, envelope.AbortMarker, lastMarker(t, f.c, 0).Marker)
		require.Equal(t, uint64(5), r.HighWatermark, "an end asked again writes no second marker")
	})
}

// Reference: KIP-98 § EndTxn: the coordinator answers once PrepareCommit
// is written. A partition whose leader is unavailable cannot take its
// marker: the end is answered all the same, requests meanwhile are
// CONCURRENT_TRANSACTIONS, the other end is INVALID_TXN_STATE, and the
// tick finishes it once the leader is back.
func TestTxnConcurrentWhileEndPending(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		prod := NewProducer(f.c, "orders")
		writeOrders(t, f.c, 1, 4)
		pid, epoch := f.init("tx", time.Minute)
		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{"orders", 0}, {"orders", 1}}))
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		require.NoError(t, f.c.TxnOffsetCommit(f.ctx(), "tx", pid, epoch, []TxnOffset{{Group: "billing", Topic: "orders", Partition: 1, Offset: 4}}))
		_, err := prod.SendBatchTo(0, txnBatch(pid, epoch, 0, 1))
		require.NoError(t, err)
		leader := f.c.Metadata().Topics["orders"].Partitions[0].Leader
		require.NoError(t, f.c.StopBroker(leader))

		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true), "answered once the decision is durable")
		require.Equal(t, TxnPrepareCommit, f.txn("tx").State)
		_, ok, err := f.c.LoadOffset("billing", "orders", 1)
		require.NoError(t, err)
		require.False(t, ok, "the offsets wait for every marker")
		requireTxnErr(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{"orders", 2}}), ErrConcurrentTransactions)
		requireTxnErr(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"), ErrConcurrentTransactions)
		err = f.c.TxnOffsetCommit(f.ctx(), "tx", pid, epoch, []TxnOffset{{Group: "billing", Topic: "orders", Partition: 1, Offset: 4}})
		requireTxnErr(t, err, ErrConcurrentTransactions)
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true), ErrConcurrentTransactions, "the same end, not finished yet")
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, false), ErrInvalidTxnState)
		_, _, err = f.c.InitTransactions(f.ctx(), "tx", time.Minute, -1, -1)
		requireTxnErr(t, err, ErrConcurrentTransactions)
		require.ErrorIs(t, f.tick(), ErrLeaderUnavailable)
		require.Equal(t, TxnPrepareCommit, f.txn("tx").State)

		_, err = f.c.StartBroker(leader)
		require.NoError(t, err)
		require.NoError(t, f.tick())
		require.Equal(t, TxnCompleteCommit, f.txn("tx").State)
		require.Equal(t, envelope.CommitMarker, lastMarker(t, f.c, 0).Marker)
		require.Equal(t, envelope.CommitMarker, lastMarker(t, f.c, 1).Marker)
		off, _, err := f.c.LoadOffset("billing", "orders", 1)
		require.NoError(t, err)
		require.Equal(t, uint64(4), off)
		_, newEpoch := f.init("tx", time.Minute)
		require.Equal(t, epoch+1, newEpoch)
	})
}

// Reference: KIP-98 § Transaction timeout, zombie fencing. The tick
// aborts a transaction past its timeout with markers of the epoch after
// the producer's: the zombie's later records are refused by the
// partitions (INVALID_PRODUCER_EPOCH) and its end by the coordinator
// (PRODUCER_FENCED); a read_committed reader skips what it wrote.
func TestTxnTimeoutAbortWritesFencingMarkers(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		prod := NewProducer(f.c, "orders")
		pid, epoch := f.init("tx", time.Second)
		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{"orders", 0}}))
		_, err := prod.SendBatchTo(0, txnBatch(pid, epoch, 0, 2))
		require.NoError(t, err)
		f.clock.Advance(time.Second + time.Millisecond)
		require.NoError(t, f.tick())
		got := f.txn("tx")
		require.Equal(t, TxnCompleteAbort, got.State)
		require.Equal(t, epoch+1, got.Epoch)
		m := lastMarker(t, f.c, 0)
		require.Equal(t, envelope.AbortMarker, m.Marker)
		require.Equal(t, epoch+1, m.Producer.Epoch, "the abort marker carries the bumped epoch")

		_, err = prod.SendBatchTo(0, txnBatch(pid, epoch, 2, 1))
		require.ErrorIs(t, err, ErrInvalidProducerEpoch, "the zombie's records are refused")
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true), ErrProducerFenced)
		r := stableOf(t, f.c, 0)
		require.Equal(t, r.HighWatermark, r.LastStable)
		require.Equal(t, []AbortedTxn{{ProducerID: pid, FirstOffset: 0}}, r.Aborted)

		// The id's next producer writes at the epoch after.
		pid2, epoch2 := f.init("tx", time.Minute)
		require.Equal(t, []any{pid, epoch + 2}, []any{pid2, epoch2})
		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid2, epoch2, []TxnPartition{{"orders", 0}}))
		_, err = prod.SendBatchTo(0, txnBatch(pid2, epoch2, 0, 1))
		require.NoError(t, err)
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid2, epoch2, true))
		require.Equal(t, uint64(5), stableOf(t, f.c, 0).LastStable)
	})
}
