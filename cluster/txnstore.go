package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// This file keeps the transaction coordinator's state (transactions.go)
// in the metadata store, durable before any answer: in one process the
// file <root>/transactions.state, every transactional id's state, replaced
// whole at each change (temp file, fsync, rename, directory fsync); in
// cluster mode MetaState.Transactions, changed by OpSaveTransaction and
// OpDeleteTransaction. Both stores decide a change by the same pure rules
// (checkTxnSave, checkTxnDelete): a change names the stored version it
// was decided on (a TxnStamp) and is refused when the id's state moved
// on since (ErrStaleTransaction), so that two processes that both, for a
// moment, believe they coordinate cannot overwrite each other's changes.

// TransactionsFileName is, inside the root of a cluster of one process,
// the file that holds every transactional id's state.
const TransactionsFileName = "transactions.state"

// TransactionsVersion is the transactions.state version this package
// writes and reads.
const TransactionsVersion = 1

// Bounds of a transactional id's state: what a store accepts.
const (
	// MaxTransactionalIDLength bounds a transactional id, in bytes.
	MaxTransactionalIDLength = 1024
	// MaxTxnPartitions bounds the partitions one transaction writes to.
	MaxTxnPartitions = 10000
	// MaxTxnGroups bounds the consumer groups one transaction commits
	// offsets of.
	MaxTxnGroups = 1000
	// MaxTxnOffsets bounds the offsets one transaction commits.
	MaxTxnOffsets = 10000
)

// maxTransactionsSize bounds transactions.state: a reader refuses a larger
// file, and a change that would make it larger is refused.
const maxTransactionsSize = 256 << 20

// TxnStamp names one stored version of a transactional id's state: the
// one a change was decided on. The zero stamp means that no state is
// stored. A stored state's Version counts its saves from 1; the producer
// id makes a stamp unique even across a deletion (expiration) and a new
// start of the same id, since producer ids are never reused.
type TxnStamp struct {
	Version    uint64 `json:"version"`
	ProducerID int64  `json:"producer_id"`
}

// Stamp is the stamp of t as stored.
func (t Transaction) Stamp() TxnStamp { return TxnStamp{Version: t.Version, ProducerID: t.ProducerID} }

// validateTxnID checks a transactional id: not empty, valid UTF-8 (it
// travels as JSON), at most MaxTransactionalIDLength bytes.
func validateTxnID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("cluster: empty transactional id: %w", ErrInvalidArgument)
	case len(id) > MaxTransactionalIDLength:
		return fmt.Errorf("cluster: transactional id of %d bytes, at most %d: %w", len(id), MaxTransactionalIDLength, ErrInvalidArgument)
	case !utf8.ValidString(id):
		return fmt.Errorf("cluster: transactional id %q is not UTF-8: %w", id, ErrInvalidArgument)
	}
	return nil
}

// validTxnTimeout reports whether d is a timeout a producer may ask for.
func validTxnTimeout(d time.Duration) bool {
	return d >= time.Millisecond && d <= MaxTransactionTimeout
}

// validateTxn checks what every stored state holds: a valid id, a
// producer id and epoch, a known state, a valid timeout, a version from 1,
// its partitions, groups and offsets sorted, unique, within bounds, each
// offset of one of its groups; none of them, and no start, unless a
// transaction is open (Ongoing or Prepare*).
func validateTxn(t Transaction) error {
	if err := validateTxnID(t.ID); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("cluster: transaction %q: %s: %w", t.ID, fmt.Sprintf(format, args...), ErrInvalidArgument)
	}
	switch {
	case t.ProducerID < 0:
		return bad("producer id %d is negative", t.ProducerID)
	case t.Epoch < 0:
		return bad("epoch %d is negative", t.Epoch)
	case !validTxnTimeout(t.Timeout):
		return bad("timeout %v outside 1ms..%v", t.Timeout, MaxTransactionTimeout)
	case t.Version < 1:
		return bad("version %d, from 1", t.Version)
	case len(t.Partitions) > MaxTxnPartitions:
		return bad("%d partitions, at most %d", len(t.Partitions), MaxTxnPartitions)
	case len(t.Groups) > MaxTxnGroups:
		return bad("%d groups, at most %d", len(t.Groups), MaxTxnGroups)
	case len(t.Offsets) > MaxTxnOffsets:
		return bad("%d offsets, at most %d", len(t.Offsets), MaxTxnOffsets)
	}
	if t.Bumped && (t.State != TxnEmpty || t.Epoch < 1) {
		return bad("bumped in state %s at epoch %d", t.State, t.Epoch)
	}
	switch t.State {
	case TxnEmpty, TxnCompleteCommit, TxnCompleteAbort:
		if len(t.Partitions) > 0 || len(t.Groups) > 0 || len(t.Offsets) > 0 || !t.Started.IsZero() {
			return bad("state %s with partitions, groups, offsets or a start", t.State)
		}
	case TxnOngoing, TxnPrepareCommit, TxnPrepareAbort:
		if len(t.Partitions) == 0 && len(t.Groups) == 0 {
			return bad("state %s with neither partitions nor groups", t.State)
		}
	default:
		return bad("unknown state %q", t.State)
	}
	for i, p := range t.Partitions {
		if err := topic.ValidateName(p.Topic); err != nil {
			return bad("partition %d: %v", i, err)
		}
		if p.Partition < 0 || p.Partition >= topic.MaxPartitionCount {
			return bad("partition %s/%d out of range", p.Topic, p.Partition)
		}
		if i > 0 && compareTxnPartitions(t.Partitions[i-1], p) >= 0 {
			return bad("partitions not sorted and unique at %s/%d", p.Topic, p.Partition)
		}
	}
	for i, g := range t.Groups {
		if err := topic.ValidateName(g); err != nil {
			return bad("group %d: %v", i, err)
		}
		if i > 0 && t.Groups[i-1] >= g {
			return bad("groups not sorted and unique at %q", g)
		}
	}
	for i, o := range t.Offsets {
		if _, ok := slices.BinarySearch(t.Groups, o.Group); !ok {
			return bad("offset of group %q, not one of the transaction's", o.Group)
		}
		if err := topic.ValidateName(o.Topic); err != nil {
			return bad("offset %d: %v", i, err)
		}
		if o.Partition < 0 || o.Partition >= topic.MaxPartitionCount || o.Offset > math.MaxInt64 {
			return bad("offset %s/%d at %d out of range", o.Topic, o.Partition, o.Offset)
		}
		if i > 0 && compareTxnOffsets(t.Offsets[i-1], o) >= 0 {
			return bad("offsets not sorted and unique at %q %s/%d", o.Group, o.Topic, o.Partition)
		}
	}
	return nil
}

// compareTxnPartitions orders partitions by topic, then number.
func compareTxnPartitions(a, b TxnPartition) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// compareTxnOffsets orders offsets by group, topic, then partition: the
// key of a pending offset.
func compareTxnOffsets(a, b TxnOffset) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// cloneTxn is a deep copy of t.
func cloneTxn(t Transaction) Transaction {
	t.Partitions, t.Groups, t.Offsets = slices.Clone(t.Partitions), slices.Clone(t.Groups), slices.Clone(t.Offsets)
	return t
}

// sameTxn reports whether a and b are stored alike: their encodings are
// equal (times compared as they travel, whatever their location), their
// nonces included.
func sameTxn(a, b Transaction) bool {
	ea, errA := json.Marshal(a)
	eb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ea) == string(eb)
}

// checkTxnSave decides a save of next decided on expect, over cur (stored
// says whether one is). next must be valid and its Version
// expect.Version+1. A store that holds expect's version takes next; one
// that holds next already, its nonce too (the same save applied twice:
// Raft may commit a proposal whose answer was lost, and the proposer send
// it again) changes nothing and reports already; anything else is stale.
func checkTxnSave(cur Transaction, stored bool, expect TxnStamp, next Transaction) (already bool, err error) {
	if err := validateTxn(next); err != nil {
		return false, err
	}
	if next.Version != expect.Version+1 {
		return false, fmt.Errorf("cluster: save transaction %q: version %d decided on version %d: %w", next.ID, next.Version, expect.Version, ErrInvalidArgument)
	}
	var have TxnStamp
	if stored {
		have = cur.Stamp()
	}
	switch {
	case have == expect:
		return false, nil
	case stored && sameTxn(cur, next):
		return true, nil
	}
	return false, &StaleTransactionError{ID: next.ID, Expected: expect, Stored: have}
}

// checkTxnDelete decides the deletion of id's state decided on expect: a
// state no longer stored is already deleted; a stored one must be
// expect's.
func checkTxnDelete(id string, cur Transaction, stored bool, expect TxnStamp) (already bool, err error) {
	if err := validateTxnID(id); err != nil {
		return false, err
	}
	if !stored {
		return true, nil
	}
	if cur.Stamp() != expect {
		return false, &StaleTransactionError{ID: id, Expected: expect, Stored: cur.Stamp()}
	}
	return false, nil
}

// StaleTransactionError refuses a change of a transactional id's state
// decided on a version the store no longer holds: another coordinator (or
// an earlier one) changed it since. It wraps ErrStaleTransaction.
type StaleTransactionError struct {
	ID string
	// Expected is the stamp the change was decided on, Stored the one
	// the store holds (zero: none).
	Expected, Stored TxnStamp
}

func (e *StaleTransactionError) Error() string {
	return fmt.Sprintf("cluster: transaction %q: change decided on version %d of producer id %d, the store holds version %d of producer id %d",
		e.ID, e.Expected.Version, e.Expected.ProducerID, e.Stored.Version, e.Stored.ProducerID)
}

// Unwrap is ErrStaleTransaction.
func (e *StaleTransactionError) Unwrap() error { return ErrStaleTransaction }

// saveTransaction applies OpSaveTransaction. Nothing is journaled.
func (s *MetaState) saveTransaction(c MetaCommand) (MetaResult, error) {
	if c.Transaction == nil {
		return MetaResult{}, fmt.Errorf("cluster: save transaction: no transaction: %w", ErrInvalidArgument)
	}
	var expect TxnStamp
	if c.Expect != nil {
		expect = *c.Expect
	}
	next := cloneTxn(*c.Transaction)
	cur, stored := s.Transactions[next.ID]
	already, err := checkTxnSave(cur, stored, expect, next)
	if err != nil {
		return MetaResult{}, err
	}
	summary := fmt.Sprintf("transaction %q: %s, producer id %d epoch %d (version %d)", next.ID, next.State, next.ProducerID, next.Epoch, next.Version)
	if already {
		return MetaResult{Summary: "already saved: " + summary}, nil
	}
	if s.Transactions == nil {
		s.Transactions = map[string]Transaction{}
	}
	s.Transactions[next.ID] = next
	return MetaResult{Summary: summary}, nil
}

// deleteTransaction applies OpDeleteTransaction. Nothing is journaled.
func (s *MetaState) deleteTransaction(c MetaCommand) (MetaResult, error) {
	var expect TxnStamp
	if c.Expect != nil {
		expect = *c.Expect
	}
	cur, stored := s.Transactions[c.TransactionalID]
	already, err := checkTxnDelete(c.TransactionalID, cur, stored, expect)
	if err != nil {
		return MetaResult{}, err
	}
	if already {
		return MetaResult{Summary: fmt.Sprintf("transaction %q: none stored", c.TransactionalID)}, nil
	}
	delete(s.Transactions, c.TransactionalID)
	return MetaResult{Summary: fmt.Sprintf("transaction %q: forgotten", c.TransactionalID)}, nil
}

// cloneTransactions is a deep copy of txns; nil stays nil.
func cloneTransactions(txns map[string]Transaction) map[string]Transaction {
	if txns == nil {
		return nil
	}
	out := make(map[string]Transaction, len(txns))
	for id, t := range txns {
		out[id] = cloneTxn(t)
	}
	return out
}

// sortedTransactions is txns by id.
func sortedTransactions(txns map[string]Transaction) []Transaction {
	out := make([]Transaction, 0, len(txns))
	for _, t := range txns {
		out = append(out, cloneTxn(t))
	}
	slices.SortFunc(out, func(a, b Transaction) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// transactionsFromList checks a list of states, as a snapshot or
// transactions.state holds it, and returns them by id: each valid, no id
// twice.
func transactionsFromList(list []Transaction) (map[string]Transaction, error) {
	out := make(map[string]Transaction, len(list))
	for _, t := range list {
		if err := validateTxn(t); err != nil {
			return nil, err
		}
		if _, dup := out[t.ID]; dup {
			return nil, fmt.Errorf("cluster: transaction %q listed twice: %w", t.ID, ErrInvalidArgument)
		}
		out[t.ID] = cloneTxn(t)
	}
	return out, nil
}

// transactionsJSON is transactions.state's form.
type transactionsJSON struct {
	Version      int           `json:"version"`
	Transactions []Transaction `json:"transactions"`
}

// EncodeTransactions renders transactions.state: {"version": 1,
// "transactions": [...]}, every state by id, one line of JSON.
func EncodeTransactions(txns map[string]Transaction) ([]byte, error) {
	out, err := json.Marshal(transactionsJSON{Version: TransactionsVersion, Transactions: sortedTransactions(txns)})
	if err != nil {
		return nil, fmt.Errorf("cluster: encode transactions: %w", err)
	}
	return append(out, '\n'), nil
}

// ParseTransactions decodes transactions.state. Anything it does not
// accept is a *TransactionsError (with an empty Path): not JSON, an
// unknown field, trailing data, another version, a state that breaks a
// rule (validateTxn) or an id listed twice.
func ParseTransactions(data []byte) (map[string]Transaction, error) {
	var in transactionsJSON
	if err := strictJSON(data, &in); err != nil {
		return nil, &TransactionsError{Reason: "not the file's JSON", Err: err}
	}
	if in.Version != TransactionsVersion {
		return nil, &TransactionsError{Reason: fmt.Sprintf("unsupported version %d, want %d", in.Version, TransactionsVersion)}
	}
	txns, err := transactionsFromList(in.Transactions)
	if err != nil {
		return nil, &TransactionsError{Reason: "invalid state", Err: err}
	}
	return txns, nil
}

// readTransactions reads every state from path: none when the file does
// not exist (no transactional id was ever used). A leftover temp file of
// an interrupted write is removed; nobody was told of what it held.
func readTransactions(fsys durable.FS, path string) (map[string]Transaction, error) {
	if err := durable.RemoveTemp(fsys, path); err != nil {
		return nil, &TransactionsError{Path: path, Reason: "cannot remove an interrupted write", Err: err}
	}
	data, err := durable.ReadSmallFile(fsys, path, maxTransactionsSize)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Transaction{}, nil
	}
	if err != nil {
		return nil, &TransactionsError{Path: path, Reason: "cannot read", Err: err}
	}
	txns, err := ParseTransactions(data)
	if err != nil {
		var te *TransactionsError
		if errors.As(err, &te) {
			te.Path = path
		}
		return nil, err
	}
	return txns, nil
}

// transactionsPath is <root>/transactions.state.
func (f *fileStore) transactionsPath() string { return filepath.Join(f.root, TransactionsFileName) }

// transactionsLocked returns the states transactions.state holds, read
// on first use. A damaged file is refused at every call (never rewritten:
// reading it as anything but what was last written could give a
// transactional id's producer id and epoch out again). f.txnMu must be
// held.
func (f *fileStore) transactionsLocked() (map[string]Transaction, error) {
	if f.txns == nil {
		txns, err := readTransactions(f.fsys, f.transactionsPath())
		if err != nil {
			return nil, err
		}
		f.txns = txns
	}
	return f.txns, nil
}

// writeTransactionsLocked writes next as transactions.state (temp file,
// fsync, rename, directory fsync) and only then makes it the state in
// memory. After a crash at any step the file holds the states before the
// change or after it. f.txnMu must be held.
func (f *fileStore) writeTransactionsLocked(next map[string]Transaction) error {
	data, err := EncodeTransactions(next)
	if err != nil {
		return err
	}
	if len(data) > maxTransactionsSize {
		return fmt.Errorf("cluster: %s would hold %d bytes, at most %d: %w", f.transactionsPath(), len(data), maxTransactionsSize, ErrInvalidArgument)
	}
	if err := durable.WriteFile(f.fsys, f.transactionsPath(), data); err != nil {
		return fmt.Errorf("cluster: write %s: %w", f.transactionsPath(), err)
	}
	f.txns = next
	return nil
}

// SaveTransaction writes t to transactions.state if the file still holds
// the state expect names (see MetaStore).
func (f *fileStore) SaveTransaction(ctx context.Context, expect TxnStamp, t Transaction) error {
	f.txnMu.Lock()
	defer f.txnMu.Unlock()
	txns, err := f.transactionsLocked()
	if err != nil {
		return err
	}
	cur, stored := txns[t.ID]
	already, err := checkTxnSave(cur, stored, expect, t)
	if err != nil || already {
		return err
	}
	next := cloneTransactions(txns)
	next[t.ID] = cloneTxn(t)
	return f.writeTransactionsLocked(next)
}

// DeleteTransaction removes id's state from transactions.state if the
// file still holds the state expect names (see MetaStore).
func (f *fileStore) DeleteTransaction(ctx context.Context, id string, expect TxnStamp) error {
	f.txnMu.Lock()
	defer f.txnMu.Unlock()
	txns, err := f.transactionsLocked()
	if err != nil {
		return err
	}
	cur, stored := txns[id]
	already, err := checkTxnDelete(id, cur, stored, expect)
	if err != nil || already {
		return err
	}
	next := cloneTransactions(txns)
	delete(next, id)
	return f.writeTransactionsLocked(next)
}

// Transaction is id's state as transactions.state holds it.
func (f *fileStore) Transaction(id string) (Transaction, bool, error) {
	f.txnMu.Lock()
	defer f.txnMu.Unlock()
	txns, err := f.transactionsLocked()
	if err != nil {
		return Transaction{}, false, err
	}
	t, ok := txns[id]
	return cloneTxn(t), ok, nil
}

// Transactions is every state transactions.state holds, by id.
func (f *fileStore) Transactions() ([]Transaction, error) {
	f.txnMu.Lock()
	defer f.txnMu.Unlock()
	txns, err := f.transactionsLocked()
	if err != nil {
		return nil, err
	}
	return sortedTransactions(txns), nil
}
