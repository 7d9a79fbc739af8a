package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file is the transaction coordinator's side of Kafka's transactions
// (KIP-98): a transactional id's producer id and epoch, the partitions and
// groups its open transaction wrote to, and the end of a transaction —
// commit or abort markers written into each of those partitions
// (WriteTxnMarker), and the consumer offsets it committed made visible.
// Its state lives in the metadata store, so it survives a restart and, in
// cluster mode, the coordinator's failover.

// MaxTransactionTimeout is the longest transaction timeout a producer may
// ask for: Kafka's transaction.max.timeout.ms default.
const MaxTransactionTimeout = 15 * time.Minute

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
	Started time.Time `json:"started"`
	// Updated is when the state last changed.
	Updated    time.Time      `json:"updated"`
	Partitions []TxnPartition `json:"partitions,omitempty"`
	Groups     []string       `json:"groups,omitempty"`
	Offsets    []TxnOffset    `json:"offsets,omitempty"`
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
)

// TxnError is a transaction request refused: which transactional id, and
// why (it unwraps to one of the errors above).
type TxnError struct {
	ID    string
	State TxnState
	Err   error
}

func (e *TxnError) Error() string {
	return fmt.Sprintf("cluster: transaction %q (%s): %v", e.ID, e.State, e.Err)
}

func (e *TxnError) Unwrap() error { return e.Err }

// InitTransactions is InitProducerId with a transactional id: the id's
// producer id and a new epoch, fencing every older one. An open
// transaction of an older epoch is aborted first.
func (c *Cluster) InitTransactions(ctx context.Context, id string, timeout time.Duration, producerID int64, epoch int16) (int64, int16, error) {
	return 0, 0, errors.ErrUnsupported
}

// AddPartitionsToTxn adds partitions to the open transaction (opening one).
func (c *Cluster) AddPartitionsToTxn(ctx context.Context, id string, producerID int64, epoch int16, parts []TxnPartition) error {
	return errors.ErrUnsupported
}

// AddOffsetsToTxn adds a consumer group to the open transaction.
func (c *Cluster) AddOffsetsToTxn(ctx context.Context, id string, producerID int64, epoch int16, group string) error {
	return errors.ErrUnsupported
}

// TxnOffsetCommit keeps offsets to commit when the transaction commits.
func (c *Cluster) TxnOffsetCommit(ctx context.Context, id string, producerID int64, epoch int16, offsets []TxnOffset) error {
	return errors.ErrUnsupported
}

// EndTxn commits or aborts the open transaction.
func (c *Cluster) EndTxn(ctx context.Context, id string, producerID int64, epoch int16, commit bool) error {
	return errors.ErrUnsupported
}

// Transactions lists every transactional id's state, by id.
func (c *Cluster) Transactions() ([]Transaction, error) {
	return nil, errors.ErrUnsupported
}

// TickTransactions aborts the transactions open past their timeout and
// finishes the ends not yet written into every partition.
func (c *Cluster) TickTransactions(ctx context.Context, now time.Time) error {
	return errors.ErrUnsupported
}
