package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// This file is the transaction coordinator's side of Kafka's transactions
// (KIP-98): a transactional id's producer id and epoch, the partitions and
// groups its open transaction wrote to, and the end of a transaction —
// commit or abort markers written into each of those partitions
// (WriteTxnMarker), and the consumer offsets it committed made visible.
// Its state lives in the metadata store, so it survives a restart and, in
// cluster mode, the coordinator's failover (txnstore.go). This file holds
// the requests; txnend.go how a transaction ends, and the coordinator's
// periodic pass.
//
// Requests of one transactional id are served one at a time in a process
// (txnLocks), each decided on the id's state as the store holds it and
// saved by a compare-and-set on that state, so that a rival coordinator
// in another process (cluster mode, for a moment around a failover)
// cannot overwrite it either.

// MaxTransactionTimeout is the longest transaction timeout a producer may
// ask for: Kafka's transaction.max.timeout.ms default.
const MaxTransactionTimeout = 15 * time.Minute

// TransactionalIDExpiration is how long a transactional id with no open
// transaction (Empty, Complete*) is remembered after its last change:
// Kafka's transactional.id.expiration.ms default. TickTransactions
// forgets it then; its producer's next request is answered
// ErrProducerIDMapping, and its next InitTransactions starts afresh.
const TransactionalIDExpiration = 7 * 24 * time.Hour

// TxnState is where a transactional id's transaction is.
type TxnState string

// The states of a transaction, Kafka's names.
const (
	TxnEmpty          TxnState = "empty"
	TxnOngoing        TxnState = "ongoing"
	TxnPrepareCommit  TxnState = "prepare-commit"
	TxnPrepareAbort   TxnState = "prepare-abort"
	TxnCompleteCommit TxnState = "complete-commit"
	TxnCompleteAbort  TxnState = "complete-abort"
)

// TxnPartition is a partition a transaction writes to.
type TxnPartition struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
}

// TxnOffset is a consumer group's offset that a transaction commits: it
// becomes the group's committed offset when, and only if, the
// transaction commits.
type TxnOffset struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    uint64 `json:"offset"`
}

// Transaction is a transactional id's state.
type Transaction struct {
	ID         string        `json:"id"`
	ProducerID int64         `json:"producer_id"`
	Epoch      int16         `json:"epoch"`
	State      TxnState      `json:"state"`
	Timeout    time.Duration `json:"timeout"`
	// Started is when the open transaction began (its first partition or
	// group added); zero when none is open.
	Started time.Time `json:"started,omitzero"`
	// Updated is when the state last changed.
	Updated time.Time `json:"updated"`
	// Partitions are the partitions the open transaction wrote to, sorted
	// by topic and partition; Groups the consumer groups it commits
	// offsets of, sorted; Offsets the offsets it commits, sorted by group,
	// topic and partition, each of one of Groups: pending, invisible to
	// LoadOffset and ListOffsets until the transaction commits.
	Partitions []TxnPartition `json:"partitions,omitempty"`
	Groups     []string       `json:"groups,omitempty"`
	Offsets    []TxnOffset    `json:"offsets,omitempty"`
	// Bumped is set, in state Empty only, when the InitTransactions that
	// made the state named the producer's id and epoch (KIP-360) and
	// bumped Epoch from the one before: that request sent again, its
	// answer lost, is answered the same (Kafka's lastProducerEpoch).
	Bumped bool `json:"bumped,omitempty"`
	// Version counts the saves of the id's state, from 1: the stored
	// version a change is decided on (TxnStamp). Nonce is drawn at random
	// for each save, so that a save applied twice (a Raft proposal sent
	// again) is told from another coordinator's that decided the same.
	Version uint64 `json:"version"`
	Nonce   uint64 `json:"nonce,omitempty"`
}

// Errors of the transaction coordinator.
var (
	// ErrProducerFenced: a newer epoch of the transactional id exists
	// (another producer with the same id started, or the coordinator
	// aborted a transaction that ran past its timeout). Kafka's
	// PRODUCER_FENCED.
	ErrProducerFenced = errors.New("producer fenced: a newer epoch of its transactional id exists")
	// ErrConcurrentTransactions: the transaction's previous end is still
	// being written into its partitions; retriable. Kafka's
	// CONCURRENT_TRANSACTIONS.
	ErrConcurrentTransactions = errors.New("the transaction's previous end is still being written; try again")
	// ErrInvalidTxnState: the request does not fit the transaction's
	// state (an end with no transaction open, a commit of an aborting
	// one). Kafka's INVALID_TXN_STATE.
	ErrInvalidTxnState = errors.New("invalid transaction state")
	// ErrProducerIDMapping: the producer id is not the transactional
	// id's, or the transactional id is unknown. Kafka's
	// INVALID_PRODUCER_ID_MAPPING.
	ErrProducerIDMapping = errors.New("the producer id is not the transactional id's")
	// ErrInvalidTxnTimeout: a timeout not above 0 or above
	// MaxTransactionTimeout. Kafka's INVALID_TRANSACTION_TIMEOUT.
	ErrInvalidTxnTimeout = errors.New("invalid transaction timeout")
	// ErrStaleTransaction is matched by *StaleTransactionError: a change
	// of a transactional id's state decided on a version the metadata
	// store no longer holds. The coordinator answers it as
	// ErrConcurrentTransactions (a TxnError wrapping both): the client
	// tries again, and the request is decided on the state as it is now.
	ErrStaleTransaction = errors.New("cluster: the transaction's state changed since the change was decided")
)

// TxnError is a transaction request refused: which transactional id, in
// which state ("" when it has none), and why (it unwraps to one of the
// errors above).
type TxnError struct {
	ID    string
	State TxnState
	Err   error
}

func (e *TxnError) Error() string {
	state := e.State
	if state == "" {
		state = "no state"
	}
	return fmt.Sprintf("cluster: transaction %q (%s): %v", e.ID, state, e.Err)
}

func (e *TxnError) Unwrap() error { return e.Err }

// txnMarkerWriters bounds the markers one transaction's end writes at
// once.
const txnMarkerWriters = 16

// txnLocks serialises the coordinator's work on each transactional id
// inside the process: a token per id in use, taken for a whole request
// (its markers included), so that two requests of one id never decide on
// the same state. Across processes the store's compare-and-set does
// (ErrStaleTransaction). The zero value is ready; it is safe for
// concurrent use.
type txnLocks struct {
	// mu guards held: each id's token, with how many callers hold it or
	// wait for it; an id nobody holds or waits for has none.
	mu   sync.Mutex
	held map[string]*txnLock
}

type txnLock struct {
	token chan struct{}
	users int
}

// lock takes id's token; a caller that waits gives up when ctx ends.
func (l *txnLocks) lock(ctx context.Context, id string) (unlock func(), err error) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*txnLock{}
	}
	k := l.held[id]
	if k == nil {
		k = &txnLock{token: make(chan struct{}, 1)}
		l.held[id] = k
	}
	k.users++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if k.users--; k.users == 0 {
			delete(l.held, id)
		}
		l.mu.Unlock()
	}
	select {
	case k.token <- struct{}{}:
		return func() { <-k.token; release() }, nil
	case <-ctx.Done():
		release()
		return nil, fmt.Errorf("cluster: transaction %q: wait for its previous request: %w", id, ctx.Err())
	}
}

// txnNow is the coordinator's clock: the cluster's, in UTC (no monotonic
// reading, so that a state compares equal to its stored copy).
func (c *Cluster) txnNow() time.Time { return c.now().UTC() }

// txnReady refuses a coordinator request on a closed cluster, or while
// its copy of the metadata is not known to be current (ErrNotReady).
func (c *Cluster) txnReady() error {
	c.mu.RLock()
	closed := c.closed
	c.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if !c.store.Ready() {
		return fmt.Errorf("cluster: transactions: %w", ErrNotReady)
	}
	return nil
}

// beginTxn checks id, takes its lock and reads its state; stored is false
// when the id has none. The caller must call unlock.
func (c *Cluster) beginTxn(ctx context.Context, id string) (unlock func(), t Transaction, stored bool, err error) {
	if err := validateTxnID(id); err != nil {
		return nil, Transaction{}, false, err
	}
	if err := c.txnReady(); err != nil {
		return nil, Transaction{}, false, err
	}
	unlock, err = c.txnLocks.lock(ctx, id)
	if err != nil {
		return nil, Transaction{}, false, err
	}
	t, stored, err = c.store.Transaction(id)
	if err != nil {
		unlock()
		return nil, Transaction{}, false, fmt.Errorf("cluster: transaction %q: read its state: %w", id, err)
	}
	return unlock, t, stored, nil
}

// saveTxn stores next, decided on prev (stored: whether prev is stored
// at all), as prev's next version changed at now, and returns it. A store
// that moved on since prev was read refuses it: a TxnError wrapping
// ErrConcurrentTransactions and ErrStaleTransaction. On error prev is
// returned.
func (c *Cluster) saveTxn(ctx context.Context, prev Transaction, stored bool, next Transaction, now time.Time) (Transaction, error) {
	var expect TxnStamp
	if stored {
		expect = prev.Stamp()
	}
	next.Version, next.Updated, next.Nonce = expect.Version+1, now, rand.Uint64()
	if err := c.store.SaveTransaction(ctx, expect, next); err != nil {
		if errors.Is(err, ErrStaleTransaction) {
			return prev, &TxnError{ID: next.ID, State: prev.State, Err: fmt.Errorf("%w: %w", ErrConcurrentTransactions, err)}
		}
		return prev, fmt.Errorf("cluster: transaction %q: save %s: %w", next.ID, next.State, err)
	}
	return next, nil
}

// checkTxnProducer checks that a request's producer id and epoch are t's:
// another producer id is ErrProducerIDMapping, another epoch
// ErrProducerFenced (a newer one started, or the coordinator aborted a
// transaction past its timeout and bumped it).
func checkTxnProducer(t Transaction, producerID int64, epoch int16) error {
	if producerID != t.ProducerID {
		return &TxnError{ID: t.ID, State: t.State,
			Err: fmt.Errorf("%w: producer id %d, the transactional id's is %d", ErrProducerIDMapping, producerID, t.ProducerID)}
	}
	if epoch != t.Epoch {
		return &TxnError{ID: t.ID, State: t.State,
			Err: fmt.Errorf("%w: epoch %d of producer id %d, the transactional id is at epoch %d", ErrProducerFenced, epoch, producerID, t.Epoch)}
	}
	return nil
}

// txnJoin is a request that adds to a transaction, begun: the id's lock
// held (unlock releases it), its state (cur; stored false: none), the
// state to add to (next) and the request's time.
type txnJoin struct {
	unlock    func()
	cur, next Transaction
	stored    bool
	now       time.Time
}

// beginJoin takes id's lock and checks a request of producerID at epoch
// that adds to its transaction (joinTxn); on an error the lock is not
// held.
func (c *Cluster) beginJoin(ctx context.Context, id string, producerID int64, epoch int16) (txnJoin, error) {
	unlock, cur, stored, err := c.beginTxn(ctx, id)
	if err != nil {
		return txnJoin{}, err
	}
	now := c.txnNow()
	next, err := joinTxn(cur, stored, id, producerID, epoch, now)
	if err != nil {
		unlock()
		return txnJoin{}, err
	}
	return txnJoin{unlock: unlock, cur: cur, next: next, stored: stored, now: now}, nil
}

// knownTxn checks that a request of producerID at epoch is id's, whose
// state is t (stored false: none): an unknown id is ErrProducerIDMapping,
// another producer or epoch checkTxnProducer's error.
func knownTxn(t Transaction, stored bool, id string, producerID int64, epoch int16) error {
	if !stored {
		return &TxnError{ID: id, Err: fmt.Errorf("%w: the transactional id is unknown (InitProducerId first)", ErrProducerIDMapping)}
	}
	return checkTxnProducer(t, producerID, epoch)
}

// joinTxn checks a request that adds to id's transaction (partitions,
// a group, offsets) and returns the state to add to: a copy of t when a
// transaction is open, one begun at now (Ongoing) when none is. An id
// with no state is ErrProducerIDMapping; a transaction whose end is being
// written ErrConcurrentTransactions.
func joinTxn(t Transaction, stored bool, id string, producerID int64, epoch int16, now time.Time) (Transaction, error) {
	if err := knownTxn(t, stored, id, producerID, epoch); err != nil {
		return t, err
	}
	switch t.State {
	case TxnPrepareCommit, TxnPrepareAbort:
		return t, &TxnError{ID: id, State: t.State, Err: ErrConcurrentTransactions}
	case TxnOngoing:
		return cloneTxn(t), nil
	}
	next := cloneTxn(t)
	next.State, next.Started, next.Bumped = TxnOngoing, now, false
	return next, nil
}

// nextTxnProducer is the producer id and epoch InitTransactions hands out
// after t's: the epoch plus one, or a new producer id at epoch 0 when the
// epoch would reach math.MaxInt16 — that last epoch is kept for the
// coordinator's own abort of a transaction past its timeout, which fences
// the producer by an epoch above its own.
func (c *Cluster) nextTxnProducer(ctx context.Context, t Transaction) (int64, int16, error) {
	if t.Epoch < math.MaxInt16-1 {
		return t.ProducerID, t.Epoch + 1, nil
	}
	id, err := c.NewProducerID(ctx)
	return id, 0, err
}

// InitTransactions is InitProducerId with a transactional id: the id's
// producer id and a new epoch, fencing every older one.
//
// An id with no state gets a new producer id (NewProducerID) at epoch 0.
// A known id's epoch is bumped; first, an open transaction of the older
// epoch is aborted (its abort markers written at the epoch after its own,
// which fences its producer), and an end being written is finished. When
// that cannot be done now (a partition's leader unavailable), the answer
// is ErrConcurrentTransactions and the end is finished later
// (TickTransactions, or the retry). A producer id and epoch given (KIP-360,
// InitProducerId v3+: not -1) must be the id's current ones
// (ErrProducerIDMapping, ErrProducerFenced); for an id with no state they
// are ignored and the id starts afresh. Given, and bumped by one, the
// same request sent again while the id's state is still the one it made
// (Empty) is answered the same, as Kafka answers a retry. The timeout is
// from 1ms to MaxTransactionTimeout (ErrInvalidTxnTimeout). The state is durable
// before the answer.
func (c *Cluster) InitTransactions(ctx context.Context, id string, timeout time.Duration, producerID int64, epoch int16) (int64, int16, error) {
	if !validTxnTimeout(timeout) {
		return -1, -1, &TxnError{ID: id, Err: fmt.Errorf("%w: %v, from 1ms to %v", ErrInvalidTxnTimeout, timeout, MaxTransactionTimeout)}
	}
	unlock, cur, stored, err := c.beginTxn(ctx, id)
	if err != nil {
		return -1, -1, err
	}
	defer unlock()
	now := c.txnNow()
	if stored && cur.State == TxnEmpty && cur.Bumped && producerID == cur.ProducerID && epoch == cur.Epoch-1 {
		// The request that bumped the epoch, sent again.
		return cur.ProducerID, cur.Epoch, nil
	}
	if stored && (producerID >= 0 || epoch >= 0) {
		if err := checkTxnProducer(cur, producerID, epoch); err != nil {
			return -1, -1, err
		}
	}
	if stored {
		switch cur.State {
		case TxnOngoing:
			cur, err = c.abortTxnLocked(ctx, cur, now)
		case TxnPrepareCommit, TxnPrepareAbort:
			cur, err = c.finishTxnLocked(ctx, cur, now)
		}
		if err != nil {
			if cur.State == TxnPrepareCommit || cur.State == TxnPrepareAbort {
				return -1, -1, &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("%w: %w", ErrConcurrentTransactions, err)}
			}
			return -1, -1, err
		}
	}
	next := Transaction{ID: id, State: TxnEmpty, Timeout: timeout}
	if stored {
		next.ProducerID, next.Epoch, err = c.nextTxnProducer(ctx, cur)
		next.Bumped = producerID == next.ProducerID && epoch >= 0 && epoch == next.Epoch-1
	} else {
		next.ProducerID, err = c.NewProducerID(ctx)
	}
	if err != nil {
		return -1, -1, fmt.Errorf("cluster: transaction %q: %w", id, err)
	}
	if _, err := c.saveTxn(ctx, cur, stored, next, now); err != nil {
		return -1, -1, err
	}
	return next.ProducerID, next.Epoch, nil
}

// AddPartitionsToTxn adds partitions to the open transaction, opening one
// (Ongoing, started now) when none is. Every partition must exist (the
// error wraps ErrUnknownTopic or topic.ErrPartitionOutOfRange, naming the
// first that does not, and nothing is added); partitions added before are
// added once. The producer must be the id's (ErrProducerIDMapping,
// ErrProducerFenced); while the previous end is being written the answer
// is ErrConcurrentTransactions. Durable before it returns.
func (c *Cluster) AddPartitionsToTxn(ctx context.Context, id string, producerID int64, epoch int16, parts []TxnPartition) error {
	for _, p := range parts {
		if _, err := readPartition(c.store, p.Topic, p.Partition); err != nil {
			return fmt.Errorf("cluster: transaction %q: add partition %s/%d: %w", id, p.Topic, p.Partition, err)
		}
	}
	j, err := c.beginJoin(ctx, id, producerID, epoch)
	if err != nil {
		return err
	}
	defer j.unlock()
	cur, stored, next, now := j.cur, j.stored, j.next, j.now
	for _, p := range parts {
		if i, found := slices.BinarySearchFunc(next.Partitions, p, compareTxnPartitions); !found {
			next.Partitions = slices.Insert(next.Partitions, i, p)
		}
	}
	switch {
	case len(next.Partitions) > MaxTxnPartitions:
		return &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("%d partitions, at most %d: %w", len(next.Partitions), MaxTxnPartitions, ErrInvalidArgument)}
	case cur.State == TxnOngoing && len(next.Partitions) == len(cur.Partitions):
		return nil // nothing new
	case len(next.Partitions) == 0 && len(next.Groups) == 0:
		return nil // nothing added, nothing to open
	}
	_, err = c.saveTxn(ctx, cur, stored, next, now)
	return err
}

// AddOffsetsToTxn adds a consumer group to the open transaction, opening
// one when none is: the transaction may then commit the group's offsets
// (TxnOffsetCommit). The group id follows the consumer id rule
// (topic.ValidateName). The checks are AddPartitionsToTxn's. Durable
// before it returns.
func (c *Cluster) AddOffsetsToTxn(ctx context.Context, id string, producerID int64, epoch int16, group string) error {
	if err := topic.ValidateName(group); err != nil {
		return fmt.Errorf("cluster: transaction %q: group id: %w", id, err)
	}
	j, err := c.beginJoin(ctx, id, producerID, epoch)
	if err != nil {
		return err
	}
	defer j.unlock()
	cur, stored, next, now := j.cur, j.stored, j.next, j.now
	i, found := slices.BinarySearch(next.Groups, group)
	if found && cur.State == TxnOngoing {
		return nil
	}
	if !found {
		if len(next.Groups) >= MaxTxnGroups {
			return &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("more than %d groups: %w", MaxTxnGroups, ErrInvalidArgument)}
		}
		next.Groups = slices.Insert(next.Groups, i, group)
	}
	_, err = c.saveTxn(ctx, cur, stored, next, now)
	return err
}

// TxnOffsetCommit keeps offsets to commit when the transaction commits:
// pending in its state, invisible to LoadOffset and ListOffsets, dropped
// if it aborts. A later offset of the same group and partition replaces
// an earlier one. Each offset's group must have been added
// (AddOffsetsToTxn) to the open transaction: otherwise, and with no
// transaction open, the answer is ErrInvalidTxnState. Each offset obeys
// CommitOffset's rules now — the partition exists, the offset is not past
// its high watermark (*client.OffsetBeyondEndError) nor below the group's
// committed offset (*client.OffsetRegressionError) — and nothing is kept
// when one does not. The producer checks are AddPartitionsToTxn's.
// Durable before it returns.
func (c *Cluster) TxnOffsetCommit(ctx context.Context, id string, producerID int64, epoch int16, offsets []TxnOffset) error {
	unlock, cur, stored, err := c.beginTxn(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if err := knownTxn(cur, stored, id, producerID, epoch); err != nil {
		return err
	}
	switch cur.State {
	case TxnPrepareCommit, TxnPrepareAbort:
		return &TxnError{ID: id, State: cur.State, Err: ErrConcurrentTransactions}
	case TxnOngoing:
	default:
		return &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("%w: no transaction is open (AddOffsetsToTxn first)", ErrInvalidTxnState)}
	}
	next := cloneTxn(cur)
	for _, o := range offsets {
		if _, ok := slices.BinarySearch(cur.Groups, o.Group); !ok {
			return &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("%w: group %q was not added to the transaction (AddOffsetsToTxn)", ErrInvalidTxnState, o.Group)}
		}
		if err := c.checkTxnOffset(o); err != nil {
			return fmt.Errorf("cluster: transaction %q: %w", id, err)
		}
		if i, found := slices.BinarySearchFunc(next.Offsets, o, compareTxnOffsets); found {
			next.Offsets[i] = o
		} else {
			next.Offsets = slices.Insert(next.Offsets, i, o)
		}
	}
	if len(next.Offsets) > MaxTxnOffsets {
		return &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("%d offsets, at most %d: %w", len(next.Offsets), MaxTxnOffsets, ErrInvalidArgument)}
	}
	if slices.Equal(next.Offsets, cur.Offsets) {
		return nil
	}
	_, err = c.saveTxn(ctx, cur, stored, next, c.txnNow())
	return err
}

// checkTxnOffset holds a pending offset to CommitOffset's rules as they
// stand now: the partition exists, the offset is not past its high
// watermark nor below the group's committed offset.
func (c *Cluster) checkTxnOffset(o TxnOffset) error {
	if err := c.offsetWithinHW("commit", o.Group, o.Topic, o.Partition, o.Offset); err != nil {
		return err
	}
	committed, ok, err := c.store.LoadOffset(o.Group, o.Topic, o.Partition)
	if err != nil {
		return err
	}
	if ok && o.Offset < committed {
		return &client.OffsetRegressionError{ConsumerID: o.Group, Topic: o.Topic, Partition: o.Partition, Committed: committed, Requested: o.Offset}
	}
	return nil
}

// EndTxn commits or aborts the open transaction.
//
// An open one (Ongoing) becomes PrepareCommit or PrepareAbort, durably;
// then a marker of the outcome is written into each of its partitions,
// the pending offsets of a commit become the groups' committed offsets,
// and the state becomes CompleteCommit or CompleteAbort. Once the Prepare
// state is durable the outcome is decided and the answer is success, as
// Kafka answers it: what cannot be written now (a partition's leader is
// unavailable) TickTransactions finishes, and requests meanwhile are
// answered ErrConcurrentTransactions. An end asked again with the same
// outcome succeeds (at once when it is complete, once finished while it
// is being written: ErrConcurrentTransactions until then); the other
// outcome, or an end with no transaction open, is ErrInvalidTxnState. The
// producer checks are AddPartitionsToTxn's.
func (c *Cluster) EndTxn(ctx context.Context, id string, producerID int64, epoch int16, commit bool) error {
	unlock, cur, stored, err := c.beginTxn(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if err := knownTxn(cur, stored, id, producerID, epoch); err != nil {
		return err
	}
	prepare, complete := TxnPrepareAbort, TxnCompleteAbort
	if commit {
		prepare, complete = TxnPrepareCommit, TxnCompleteCommit
	}
	now := c.txnNow()
	switch cur.State {
	case TxnOngoing:
		next := cloneTxn(cur)
		next.State = prepare
		if cur, err = c.saveTxn(ctx, cur, true, next, now); err != nil {
			return err
		}
		// The outcome is decided: what is left is finished later if it
		// cannot be now.
		_, _ = c.finishTxnLocked(ctx, cur, now)
		return nil
	case prepare:
		if _, err := c.finishTxnLocked(ctx, cur, now); err != nil {
			return &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("%w: %w", ErrConcurrentTransactions, err)}
		}
		return nil
	case complete:
		return nil
	case TxnEmpty:
		return &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("%w: no transaction is open", ErrInvalidTxnState)}
	}
	return &TxnError{ID: id, State: cur.State, Err: fmt.Errorf("%w: the transaction ends the other way", ErrInvalidTxnState)}
}

// Transactions lists every transactional id's state, by id: for
// ListTransactions and DescribeTransactions, and for OffsetFetch's
// require_stable (a group with pending offsets in a transaction).
func (c *Cluster) Transactions() ([]Transaction, error) {
	if err := c.txnReady(); err != nil {
		return nil, err
	}
	return c.store.Transactions()
}
