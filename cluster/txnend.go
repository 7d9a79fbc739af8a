package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// This file is how the transaction coordinator ends a transaction once
// its outcome is decided (Prepare*): a marker into each partition, a
// commit's offsets committed, then Complete* — at EndTxn, and again at
// each pass of TickTransactions while something is left — and the pass
// itself, which also aborts a transaction past its timeout and forgets an
// idle transactional id.

// abortTxnLocked aborts t, an open transaction, as its coordinator does
// when it runs past its timeout or its id is initialised again: its epoch
// bumped (up to math.MaxInt16), so that its producer's later writes and
// end are fenced (ErrProducerFenced), PrepareAbort made durable, then
// finished (finishTxnLocked). It returns the state reached: t itself when
// PrepareAbort could not be saved. t's lock must be held.
func (c *Cluster) abortTxnLocked(ctx context.Context, t Transaction, now time.Time) (Transaction, error) {
	next := cloneTxn(t)
	next.State = TxnPrepareAbort
	if next.Epoch < math.MaxInt16 {
		next.Epoch++
	}
	prepared, err := c.saveTxn(ctx, t, true, next, now)
	if err != nil {
		return t, err
	}
	return c.finishTxnLocked(ctx, prepared, now)
}

// finishTxnLocked finishes t, whose end is decided (PrepareCommit or
// PrepareAbort): a marker into each of its partitions at its epoch, its
// pending offsets committed if it commits, then Complete* with nothing
// pending, saved. It returns the state reached: t, with the error, when
// a step failed; the steps done are done again by the next attempt (a
// marker written twice is the partition's to accept). t's lock must be
// held.
func (c *Cluster) finishTxnLocked(ctx context.Context, t Transaction, now time.Time) (Transaction, error) {
	commit := t.State == TxnPrepareCommit
	if err := c.writeTxnMarkers(ctx, t, commit); err != nil {
		return t, err
	}
	if commit {
		if err := c.commitTxnOffsets(ctx, t); err != nil {
			return t, err
		}
	}
	next := Transaction{ID: t.ID, ProducerID: t.ProducerID, Epoch: t.Epoch, State: TxnCompleteAbort, Timeout: t.Timeout}
	if commit {
		next.State = TxnCompleteCommit
	}
	return c.saveTxn(ctx, t, true, next, now)
}

// partitionGone reports whether err says that a partition no longer
// exists (its topic was deleted): nothing is left to mark or commit there.
func partitionGone(err error) bool {
	return errors.Is(err, ErrUnknownTopic) || errors.Is(err, topic.ErrPartitionOutOfRange) || errors.Is(err, topic.ErrTopicNotFound)
}

// writeTxnMarkers writes t's end marker into each of its partitions,
// txnMarkerWriters at a time. A partition whose topic was deleted needs
// none, nor one that knows a newer epoch of the producer.
func (c *Cluster) writeTxnMarkers(ctx context.Context, t Transaction, commit bool) error {
	errs := make([]error, len(t.Partitions))
	slots := make(chan struct{}, txnMarkerWriters)
	var wg sync.WaitGroup
	for i, p := range t.Partitions {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			err := c.WriteTxnMarkerAt(ctx, p.Topic, p.Partition, t.ProducerID, t.Epoch, commit, t.Version)
			// A partition that refuses the marker's epoch as older than
			// its own has seen a newer epoch of the producer, which ended
			// this transaction there: retrying could never succeed.
			if err != nil && !partitionGone(err) && !errors.Is(err, ErrInvalidProducerEpoch) {
				errs[i] = fmt.Errorf("cluster: transaction %q: marker into %s/%d: %w", t.ID, p.Topic, p.Partition, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// commitTxnOffsets makes a committing transaction's pending offsets the
// groups' committed offsets, through the store's commit (the path of
// CommitOffset). An offset below the one committed since it was checked
// is skipped (a commit never goes backwards, and the transaction must
// finish), and so is one of a deleted partition.
func (c *Cluster) commitTxnOffsets(ctx context.Context, t Transaction) error {
	for _, o := range t.Offsets {
		if _, err := readPartition(c.store, o.Topic, o.Partition); partitionGone(err) {
			continue
		}
		err := c.store.CommitOffset(ctx, o.Group, o.Topic, o.Partition, o.Offset)
		var regression *client.OffsetRegressionError
		if err != nil && !errors.As(err, &regression) && !partitionGone(err) {
			return fmt.Errorf("cluster: transaction %q: commit the offset of group %q on %s/%d: %w", t.ID, o.Group, o.Topic, o.Partition, err)
		}
	}
	return nil
}

// txnDue is what a tick does to a transactional id.
type txnDue int

const (
	txnDueNothing txnDue = iota
	// txnDueFinish: its end is decided and not yet written.
	txnDueFinish
	// txnDueAbort: its transaction ran past its timeout.
	txnDueAbort
	// txnDueExpire: idle, with no transaction open, for longer than
	// TransactionalIDExpiration.
	txnDueExpire
)

// txnDueAt decides what a tick at now does to t.
func txnDueAt(t Transaction, now time.Time) txnDue {
	switch t.State {
	case TxnPrepareCommit, TxnPrepareAbort:
		return txnDueFinish
	case TxnOngoing:
		if now.Sub(t.Started) > t.Timeout {
			return txnDueAbort
		}
	default:
		if now.Sub(t.Updated) > TransactionalIDExpiration {
			return txnDueExpire
		}
	}
	return txnDueNothing
}

// TickTransactions is the coordinator's periodic pass, at now: it
// finishes every end not yet written into all its partitions; aborts
// every transaction open past its timeout, with its epoch bumped so that
// the producer's later writes and end are fenced (ErrProducerFenced);
// and forgets every id idle, with no transaction open, for longer than
// TransactionalIDExpiration. Each id is handled under its lock, decided
// again on its state as it is then. An id that cannot be handled now is
// left for the next pass; the errors are joined.
func (c *Cluster) TickTransactions(ctx context.Context, now time.Time) error {
	if err := c.txnReady(); err != nil {
		return err
	}
	now = now.UTC()
	all, err := c.store.Transactions()
	if err != nil {
		return fmt.Errorf("cluster: transactions: %w", err)
	}
	var errs []error
	for _, t := range all {
		if txnDueAt(t, now) == txnDueNothing {
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("cluster: transactions: pass cut short: %w", err))
			break
		}
		errs = append(errs, c.tickTxn(ctx, t.ID, now))
	}
	return errors.Join(errs...)
}

// tickTxn does what is due to id at now.
func (c *Cluster) tickTxn(ctx context.Context, id string, now time.Time) error {
	unlock, cur, stored, err := c.beginTxn(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if !stored {
		return nil
	}
	switch txnDueAt(cur, now) {
	case txnDueFinish:
		_, err = c.finishTxnLocked(ctx, cur, now)
	case txnDueAbort:
		_, err = c.abortTxnLocked(ctx, cur, now)
	case txnDueExpire:
		if err = c.store.DeleteTransaction(ctx, id, cur.Stamp()); err != nil {
			err = fmt.Errorf("cluster: transaction %q: forget it: %w", id, err)
		}
	}
	return err
}
