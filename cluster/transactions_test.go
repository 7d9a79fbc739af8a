package cluster

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// Reference: KIP-98 § InitProducerId with a transactional id. A new id
// gets a new producer id at epoch 0; each InitTransactions again bumps the
// epoch and fences the older one; KIP-360's producer id and epoch, when
// given, must be the current ones; the timeout is from 1ms to
// MaxTransactionTimeout.
func TestTxnInitBumpsAndFences(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		pid, epoch := f.init("tx", time.Minute)
		require.Equal(t, int16(0), epoch)
		other, _ := f.init("other", time.Minute)
		require.NotEqual(t, pid, other, "each transactional id has its own producer id")

		pid2, epoch2 := f.init("tx", time.Minute)
		require.Equal(t, pid, pid2, "InitTransactions again keeps the producer id")
		require.Equal(t, int16(1), epoch2)
		got := f.txn("tx")
		require.Equal(t, TxnEmpty, got.State)
		require.Equal(t, time.Minute, got.Timeout)
		require.Equal(t, f.clock.Now(), got.Updated)

		// The producer of epoch 0 is fenced; another producer id is not
		// the id's.
		err := f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, 0, []TxnPartition{{Topic: "orders", Partition: 0}})
		requireTxnErr(t, err, ErrProducerFenced)
		err = f.c.AddPartitionsToTxn(f.ctx(), "tx", other, 1, []TxnPartition{{Topic: "orders", Partition: 0}})
		requireTxnErr(t, err, ErrProducerIDMapping)
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, 0, true), ErrProducerFenced)

		// KIP-360: a producer that gives its id and epoch.
		_, _, err = f.c.InitTransactions(f.ctx(), "tx", time.Minute, pid, 0)
		requireTxnErr(t, err, ErrProducerFenced, "an older epoch")
		_, _, err = f.c.InitTransactions(f.ctx(), "tx", time.Minute, other, 1)
		requireTxnErr(t, err, ErrProducerIDMapping, "another producer id")
		pid3, epoch3, err := f.c.InitTransactions(f.ctx(), "tx", time.Minute, pid, 1)
		require.NoError(t, err)
		require.Equal(t, []any{pid, int16(2)}, []any{pid3, epoch3})

		for _, timeout := range []time.Duration{0, -time.Second, time.Millisecond - 1, MaxTransactionTimeout + 1} {
			_, _, err := f.c.InitTransactions(f.ctx(), "tx", timeout, -1, -1)
			requireTxnErr(t, err, ErrInvalidTxnTimeout, "timeout %v", timeout)
		}
		_, _, err = f.c.InitTransactions(f.ctx(), "", time.Minute, -1, -1)
		require.ErrorIs(t, err, ErrInvalidArgument)
		_, _, err = f.c.InitTransactions(f.ctx(), "bad\xff", time.Minute, -1, -1)
		require.ErrorIs(t, err, ErrInvalidArgument)
		require.Equal(t, uint64(3), f.txn("tx").Version, "refusals change nothing")
	})
}

// The epoch InitTransactions hands out stops below math.MaxInt16, which
// is kept for the coordinator's fencing abort: past it the id gets a new
// producer id at epoch 0.
func TestTxnInitEpochExhausted(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		pid, _ := f.init("tx", time.Minute)
		cur := f.txn("tx")
		worn := cur
		worn.Epoch, worn.Version = math.MaxInt16-2, cur.Version+1
		require.NoError(t, f.c.store.SaveTransaction(f.ctx(), cur.Stamp(), worn))

		got, epoch := f.init("tx", time.Minute)
		require.Equal(t, []any{pid, int16(math.MaxInt16 - 1)}, []any{got, epoch})
		got, epoch = f.init("tx", time.Minute)
		require.NotEqual(t, pid, got, "a new producer id")
		require.Equal(t, int16(0), epoch)
	})
}

// Partitions added are checked against the metadata, kept once each,
// sorted; the first addition opens the transaction (Ongoing, started
// now). Requests of an unknown id are ErrProducerIDMapping; an end with
// nothing open is ErrInvalidTxnState.
func TestTxnAddPartitions(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		err := f.c.AddPartitionsToTxn(f.ctx(), "nobody", 0, 0, []TxnPartition{{Topic: "orders", Partition: 0}})
		requireTxnErr(t, err, ErrProducerIDMapping)
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "nobody", 0, 0, true), ErrProducerIDMapping)

		pid, epoch := f.init("tx", time.Minute)
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true), ErrInvalidTxnState, "nothing open")

		err = f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{Topic: "orders", Partition: 1}, {Topic: "missing", Partition: 0}})
		require.ErrorIs(t, err, ErrUnknownTopic)
		err = f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{Topic: "orders", Partition: 3}})
		require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
		require.Equal(t, TxnEmpty, f.txn("tx").State, "nothing was added")

		started := f.clock.Advance(time.Second)
		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{Topic: "orders", Partition: 2}, {Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 2}}))
		f.clock.Advance(time.Second)
		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}))
		got := f.txn("tx")
		require.Equal(t, TxnOngoing, got.State)
		require.Equal(t, started, got.Started, "the transaction started with its first partition")
		require.Equal(t, []TxnPartition{{"orders", 0}, {"orders", 1}, {"orders", 2}}, got.Partitions)
		version := got.Version
		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{Topic: "orders", Partition: 1}}))
		require.Equal(t, version, f.txn("tx").Version, "a partition added again changes nothing")

		require.ErrorIs(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "not a group"), topic.ErrInvalidName)
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "audit"))
		require.Equal(t, []string{"audit", "billing"}, f.txn("tx").Groups)
	})
}

// One transactional id's requests are served one at a time: partitions
// added by many callers at once are all kept.
func TestTxnConcurrentAdds(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		pid, epoch := f.init("tx", time.Minute)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for p := range 3 {
			wg.Go(func() {
				errs[p] = f.c.AddPartitionsToTxn(f.ctx(), "tx", pid, epoch, []TxnPartition{{Topic: "orders", Partition: p}})
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, f.txn("tx").Partitions, 3)
	})
}

// writeOrders writes n records into orders/partition, so that offsets up
// to n can be committed.
func writeOrders(t *testing.T, c *Cluster, partition, n int) {
	t.Helper()
	sendN(t, NewProducer(c, "orders"), keyFor(t, partition, 3), n)
}

// Reference: KIP-98 § TxnOffsetCommit. Offsets a transaction commits are
// pending, invisible to LoadOffset and ListOffsets, until it commits;
// they are dropped if it aborts. They obey CommitOffset's rules when
// sent; one overtaken by a commit outside the transaction is skipped
// when it commits, since a commit never goes backwards.
func TestTxnPendingOffsets(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		writeOrders(t, f.c, 0, 10)
		pid, epoch := f.init("tx", time.Minute)
		commit := func(offset uint64) error {
			return f.c.TxnOffsetCommit(f.ctx(), "tx", pid, epoch, []TxnOffset{{Group: "billing", Topic: "orders", Partition: 0, Offset: offset}})
		}
		requireTxnErr(t, commit(5), ErrInvalidTxnState, "no transaction open")
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		err := f.c.TxnOffsetCommit(f.ctx(), "tx", pid, epoch, []TxnOffset{{Group: "audit", Topic: "orders", Partition: 0, Offset: 1}})
		requireTxnErr(t, err, ErrInvalidTxnState, "a group not added")
		require.ErrorIs(t, commit(11), client.ErrOffsetBeyondEnd)
		require.NoError(t, commit(4))
		require.NoError(t, commit(5))
		require.Equal(t, []TxnOffset{{Group: "billing", Topic: "orders", Partition: 0, Offset: 5}}, f.txn("tx").Offsets, "the later offset replaces the earlier")

		_, ok, err := f.c.LoadOffset("billing", "orders", 0)
		require.NoError(t, err)
		require.False(t, ok, "pending until the transaction commits")
		listed, err := f.c.ListOffsets("billing")
		require.NoError(t, err)
		require.Empty(t, listed)

		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true))
		require.Equal(t, TxnCompleteCommit, f.txn("tx").State)
		require.Empty(t, f.txn("tx").Offsets)
		off, ok, err := f.c.LoadOffset("billing", "orders", 0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, uint64(5), off, "committed with the transaction")

		// Aborted: dropped.
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		require.NoError(t, commit(8))
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, false))
		require.Equal(t, TxnCompleteAbort, f.txn("tx").State)
		off, _, err = f.c.LoadOffset("billing", "orders", 0)
		require.NoError(t, err)
		require.Equal(t, uint64(5), off, "an aborted transaction's offsets are dropped")

		// Backwards is refused when sent; overtaken meanwhile, skipped.
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		var regression *client.OffsetRegressionError
		require.ErrorAs(t, commit(3), &regression)
		require.NoError(t, commit(7))
		require.NoError(t, f.c.CommitOffset("billing", "orders", 0, 9))
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true))
		require.Equal(t, TxnCompleteCommit, f.txn("tx").State)
		off, _, err = f.c.LoadOffset("billing", "orders", 0)
		require.NoError(t, err)
		require.Equal(t, uint64(9), off, "a commit never goes backwards")
	})
}

// Reference: KIP-98 § EndTxn. An end asked again with the same outcome
// succeeds; with the other, or with nothing open, it is
// INVALID_TXN_STATE.
func TestTxnEndRetried(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		pid, epoch := f.init("tx", time.Minute)
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true))
		version := f.txn("tx").Version
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true), "the same end again")
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, false), ErrInvalidTxnState)
		require.Equal(t, version, f.txn("tx").Version)

		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, false))
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, false))
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true), ErrInvalidTxnState)

		f.init("tx", time.Minute)
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch+1, false), ErrInvalidTxnState, "nothing open after InitTransactions")
	})
}

// Reference: KIP-98 § Transaction timeout. A transaction open past its
// timeout is aborted by the coordinator's tick with its epoch bumped, so
// that its producer — a zombie — is fenced: its later additions and its
// end are PRODUCER_FENCED. InitTransactions of an id whose transaction is
// open aborts it the same way first.
func TestTxnTimeoutAbortFences(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		pid, epoch := f.init("tx", 10*time.Second)
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		f.clock.Advance(10 * time.Second)
		require.NoError(t, f.tick())
		require.Equal(t, TxnOngoing, f.txn("tx").State, "not past its timeout yet")

		f.clock.Advance(time.Millisecond)
		require.NoError(t, f.tick())
		got := f.txn("tx")
		require.Equal(t, TxnCompleteAbort, got.State)
		require.Equal(t, epoch+1, got.Epoch, "the abort bumps the epoch")
		requireTxnErr(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"), ErrProducerFenced)
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true), ErrProducerFenced)
		err := f.c.TxnOffsetCommit(f.ctx(), "tx", pid, epoch, []TxnOffset{{Group: "billing", Topic: "orders", Partition: 0, Offset: 0}})
		requireTxnErr(t, err, ErrProducerFenced)

		// A new producer of the id, while the next transaction is open.
		_, epoch = f.init("tx", 10*time.Second)
		require.Equal(t, got.Epoch+1, epoch)
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing"))
		_, newEpoch := f.init("tx", 10*time.Second)
		require.Equal(t, epoch+2, newEpoch, "aborted at the epoch after, then bumped")
		require.Equal(t, TxnEmpty, f.txn("tx").State)
		requireTxnErr(t, f.c.EndTxn(f.ctx(), "tx", pid, epoch, true), ErrProducerFenced)
	})
}

// Reference: transactional.id.expiration.ms. An id idle, with no
// transaction open, for longer than TransactionalIDExpiration is
// forgotten; an open one is not (its timeout aborts it first).
func TestTxnExpiration(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		pid, epoch := f.init("idle", time.Minute)
		f.init("busy", MaxTransactionTimeout)
		f.clock.Advance(TransactionalIDExpiration - time.Hour)
		busyPid, busyEpoch := f.init("busy", MaxTransactionTimeout)
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "busy", busyPid, busyEpoch, "billing"))
		f.clock.Advance(time.Hour)
		require.NoError(t, f.tick())
		require.Len(t, f.txns(), 2, "exactly TransactionalIDExpiration is not past it")

		f.clock.Advance(time.Millisecond)
		require.NoError(t, f.tick())
		all := f.txns()
		require.Len(t, all, 1)
		require.Equal(t, "busy", all[0].ID)
		requireTxnErr(t, f.c.AddOffsetsToTxn(f.ctx(), "idle", pid, epoch, "billing"), ErrProducerIDMapping)
		newPid, newEpoch := f.init("idle", time.Minute)
		require.NotEqual(t, pid, newPid, "a forgotten id starts afresh")
		require.Equal(t, int16(0), newEpoch)
	})
}

// txns is every id's state.
func (f *txnFixture) txns() []Transaction {
	f.t.Helper()
	all, err := f.c.Transactions()
	require.NoError(f.t, err)
	return all
}

// The coordinator's state is durable: it survives a reopen of the
// embedded cluster (transactions.state) and a replay of the commands
// into a fresh MetaState and a snapshot of it (cluster mode); the open
// transaction goes on where it was.
func TestTxnStateSurvivesReopen(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		writeOrders(t, f.c, 1, 3)
		pid, epoch := f.init("open", time.Minute)
		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "open", pid, epoch, []TxnPartition{{Topic: "orders", Partition: 2}}))
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "open", pid, epoch, "billing"))
		require.NoError(t, f.c.TxnOffsetCommit(f.ctx(), "open", pid, epoch, []TxnOffset{{Group: "billing", Topic: "orders", Partition: 1, Offset: 3}}))
		donePid, doneEpoch := f.init("done", time.Minute)
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "done", donePid, doneEpoch, "audit"))
		require.NoError(t, f.c.EndTxn(f.ctx(), "done", donePid, doneEpoch, false))
		before := f.txns()

		f.reopen()
		require.Equal(t, before, f.txns())
		requireTxnErr(t, f.c.AddOffsetsToTxn(f.ctx(), "open", pid, epoch-1, "billing"), ErrProducerFenced, "fencing survives too")
		require.NoError(t, f.c.AddOffsetsToTxn(f.ctx(), "open", pid, epoch, "audit"))
		_, again := f.init("done", time.Minute)
		require.Equal(t, doneEpoch+1, again)
		otherPid, _ := f.init("new", time.Minute)
		require.Greater(t, otherPid, pid, "producer ids are never handed out twice")
	})
}

// lagStore answers Transaction from a copy taken earlier, as a node whose
// copy of the replicated state lags would: the coordinator decides on a
// stale state, and the store refuses the change.
type lagStore struct {
	MetaStore
	// old is the state answered, by id.
	old map[string]Transaction
}

func (l *lagStore) Transaction(id string) (Transaction, bool, error) {
	t, ok := l.old[id]
	return t, ok, nil
}

// Two coordinators that both, for a moment, believe they coordinate
// cannot overwrite each other's changes: a change decided on a state the
// store no longer holds is refused (ErrStaleTransaction), answered as
// CONCURRENT_TRANSACTIONS, and changes nothing.
func TestTxnStaleSaveRefused(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		pid, epoch := f.init("tx", time.Minute)
		stale := f.txn("tx")
		f.init("tx", time.Minute) // another coordinator's change
		current := f.txn("tx")

		f.c.store = &lagStore{MetaStore: f.c.store, old: map[string]Transaction{"tx": stale}}
		err := f.c.AddOffsetsToTxn(f.ctx(), "tx", pid, epoch, "billing")
		requireTxnErr(t, err, ErrConcurrentTransactions)
		require.ErrorIs(t, err, ErrStaleTransaction)
		_, _, err = f.c.InitTransactions(f.ctx(), "tx", time.Minute, -1, -1)
		require.ErrorIs(t, err, ErrStaleTransaction)
		f.c.store = f.c.store.(*lagStore).MetaStore
		require.Equal(t, current, f.txn("tx"), "nothing changed")

		// The store's own rule, directly: a stale stamp, a version that
		// does not follow its stamp, a stale deletion.
		next := cloneTxn(current)
		next.Version, next.Timeout = stale.Version+1, 2*time.Minute
		var se *StaleTransactionError
		require.ErrorAs(t, f.c.store.SaveTransaction(f.ctx(), stale.Stamp(), next), &se)
		require.Equal(t, stale.Stamp(), se.Expected)
		require.Equal(t, current.Stamp(), se.Stored)
		require.ErrorIs(t, f.c.store.SaveTransaction(f.ctx(), current.Stamp(), next), ErrInvalidArgument)
		require.ErrorIs(t, f.c.store.DeleteTransaction(f.ctx(), "tx", stale.Stamp()), ErrStaleTransaction)
		require.ErrorIs(t, f.c.store.SaveTransaction(f.ctx(), TxnStamp{}, Transaction{ID: "tx", ProducerID: pid, State: TxnEmpty, Timeout: time.Minute, Version: 1}),
			ErrStaleTransaction, "a new id's save when the id has a state")
		require.NoError(t, f.c.store.DeleteTransaction(f.ctx(), "tx", current.Stamp()))
		require.NoError(t, f.c.store.DeleteTransaction(f.ctx(), "tx", current.Stamp()), "a state no longer stored is no error")
		require.Empty(t, f.txns())
	})
}

// A save applied twice — Raft commits a proposal whose answer was lost,
// and the proposer sends it again — finds the state saved already and
// succeeds without a change.
func TestTxnSaveAppliedTwice(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		f.init("tx", time.Minute)
		cur := f.txn("tx")
		next := cloneTxn(cur)
		next.Timeout, next.Version = 2*time.Minute, cur.Version+1
		require.NoError(t, f.c.store.SaveTransaction(f.ctx(), cur.Stamp(), next))
		require.NoError(t, f.c.store.SaveTransaction(f.ctx(), cur.Stamp(), next), "the same save again")
		require.Equal(t, next.Version, f.txn("tx").Version)
		other := cloneTxn(next)
		other.Timeout = 3 * time.Minute
		require.ErrorIs(t, f.c.store.SaveTransaction(f.ctx(), cur.Stamp(), other), ErrStaleTransaction, "another save on the same version")
	})
}

// A closed cluster refuses the coordinator's requests.
func TestTxnClosed(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		require.NoError(t, f.c.Close())
		_, _, err := f.c.InitTransactions(context.Background(), "tx", time.Minute, -1, -1)
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, f.c.TickTransactions(context.Background(), f.clock.Now()), ErrClosed)
	})
}

// txnDueAt is the tick's rule, a pure function of the state and the
// time.
func TestTxnDueAt(t *testing.T) {
	t0 := metaT0
	for _, tc := range []struct {
		name string
		t    Transaction
		now  time.Time
		want txnDue
	}{
		{"empty, fresh", Transaction{State: TxnEmpty, Updated: t0}, t0.Add(time.Hour), txnDueNothing},
		{"empty, idle at the limit", Transaction{State: TxnEmpty, Updated: t0}, t0.Add(TransactionalIDExpiration), txnDueNothing},
		{"empty, idle past it", Transaction{State: TxnEmpty, Updated: t0}, t0.Add(TransactionalIDExpiration + 1), txnDueExpire},
		{"complete, idle past it", Transaction{State: TxnCompleteCommit, Updated: t0}, t0.Add(TransactionalIDExpiration + 1), txnDueExpire},
		{"ongoing within its timeout", Transaction{State: TxnOngoing, Started: t0, Timeout: time.Minute, Updated: t0}, t0.Add(time.Minute), txnDueNothing},
		{"ongoing past its timeout", Transaction{State: TxnOngoing, Started: t0, Timeout: time.Minute, Updated: t0}, t0.Add(time.Minute + 1), txnDueAbort},
		{"ongoing, long idle", Transaction{State: TxnOngoing, Started: t0, Timeout: MaxTransactionTimeout, Updated: t0.Add(-30 * 24 * time.Hour)}, t0, txnDueNothing},
		{"prepare commit", Transaction{State: TxnPrepareCommit, Updated: t0}, t0, txnDueFinish},
		{"prepare abort", Transaction{State: TxnPrepareAbort, Updated: t0}, t0, txnDueFinish},
	} {
		require.Equal(t, tc.want, txnDueAt(tc.t, tc.now), tc.name)
	}
}

// Requests of one id wait for each other, and a wait ends with its
// context.
func TestTxnLocksWaitEndsWithContext(t *testing.T) {
	var l txnLocks
	unlock, err := l.lock(context.Background(), "tx")
	require.NoError(t, err)
	other, err := l.lock(context.Background(), "other")
	require.NoError(t, err, "another id does not wait")
	other()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.lock(ctx, "tx")
	require.ErrorIs(t, err, context.Canceled)
	unlock()
	unlock, err = l.lock(context.Background(), "tx")
	require.NoError(t, err)
	unlock()
	require.Empty(t, l.held, "no token is kept for an id nobody holds")
}

// Reference: KIP-360 § InitProducerId, Kafka's
// TransactionMetadata.prepareIncrementProducerEpoch: an InitProducerId
// that gives the producer's id and epoch and bumps it, whose answer was
// lost, is sent again with the same id and epoch; it is answered with the
// epoch it bumped to, not fenced, and bumps nothing more. Only that
// producer's: an id initialised afresh (no epoch given) fences the older
// epoch for good, and once the transaction moves on the retry is fenced.
func TestTxnInitRetried(t *testing.T) {
	forTxnModes(t, func(t *testing.T, f *txnFixture) {
		pid, epoch := f.init("tx", time.Minute)
		pid1, epoch1, err := f.c.InitTransactions(f.ctx(), "tx", time.Minute, pid, epoch)
		require.NoError(t, err)
		require.Equal(t, []any{pid, epoch + 1}, []any{pid1, epoch1})
		version := f.txn("tx").Version
		pid2, epoch2, err := f.c.InitTransactions(f.ctx(), "tx", time.Minute, pid, epoch)
		require.NoError(t, err, "the same request sent again")
		require.Equal(t, []any{pid1, epoch1}, []any{pid2, epoch2}, "answered as the first time")
		require.Equal(t, version, f.txn("tx").Version, "nothing more bumped")

		require.NoError(t, f.c.AddPartitionsToTxn(f.ctx(), "tx", pid1, epoch1, []TxnPartition{{Topic: "orders", Partition: 0}}))
		_, _, err = f.c.InitTransactions(f.ctx(), "tx", time.Minute, pid, epoch)
		requireTxnErr(t, err, ErrProducerFenced, "a transaction began since: no retry of the old request")
		require.NoError(t, f.c.EndTxn(f.ctx(), "tx", pid1, epoch1, false))

		_, epoch3 := f.init("tx", time.Minute) // afresh: no epoch given
		_, _, err = f.c.InitTransactions(f.ctx(), "tx", time.Minute, pid, epoch3-1)
		requireTxnErr(t, err, ErrProducerFenced, "the epoch an afresh start fenced is fenced")
	})
}
