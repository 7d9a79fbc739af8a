package cluster

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// txnSample is a valid stored state of an open transaction.
func txnSample(id string, version uint64) Transaction {
	return Transaction{ID: id, ProducerID: 7, Epoch: 3, State: TxnOngoing, Timeout: time.Minute, Started: metaT0, Updated: metaT0.Add(time.Second),
		Partitions: []TxnPartition{{"orders", 0}, {"orders", 2}}, Groups: []string{"billing"},
		Offsets: []TxnOffset{{Group: "billing", Topic: "orders", Partition: 1, Offset: 42}}, Version: version, Nonce: 99}
}

// Rule (OpSaveTransaction, OpDeleteTransaction): a change applies only
// on the stored version it was decided on — none, for a new id — and
// writes the next; the same save applied twice changes nothing; any other
// is refused (ErrStaleTransaction) and leaves the state as it was. The
// states survive a clone and a snapshot; nothing is journaled.
func TestMetaStateSaveTransaction(t *testing.T) {
	s := newMetaState(t, 1)
	end := s.JournalEnd()
	first := txnSample("tx", 1)
	save := func(expect TxnStamp, next Transaction) MetaCommand {
		return MetaCommand{Op: OpSaveTransaction, Time: metaT0, Transaction: &next, Expect: &expect}
	}
	mustApply(t, s, save(TxnStamp{}, first))
	mustApply(t, s, save(TxnStamp{}, first)) // applied twice
	rival := txnSample("tx", 1)
	rival.Nonce = 5
	require.ErrorIs(t, applyRefused(t, s, save(TxnStamp{}, rival)), ErrStaleTransaction, "another coordinator's first save of the id")
	second := first
	second.State, second.Version, second.Nonce = TxnPrepareCommit, 2, 100
	require.ErrorIs(t, applyRefused(t, s, save(TxnStamp{Version: 1, ProducerID: 8}, second)), ErrStaleTransaction, "another producer id's version 1")
	mustApply(t, s, save(first.Stamp(), second))
	other := second
	other.Nonce = 101
	require.ErrorIs(t, applyRefused(t, s, save(first.Stamp(), other)), ErrStaleTransaction, "another save decided on version 1")
	require.ErrorIs(t, applyRefused(t, s, save(second.Stamp(), second)), ErrInvalidArgument, "a version that does not follow its stamp")
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpSaveTransaction, Time: metaT0}), ErrInvalidArgument)
	require.Equal(t, second, s.Transactions["tx"])
	require.Equal(t, end, s.JournalEnd(), "transactions are not journaled")

	clone := s.Clone()
	clone.Transactions["tx"].Partitions[0].Partition = 9
	require.Equal(t, second, s.Transactions["tx"], "a clone shares nothing")

	enc := encodeMeta(t, s)
	require.Contains(t, string(enc), `"transactions":[{"id":"tx"`)
	parsed, err := ParseMetaState(enc)
	require.NoError(t, err)
	require.Equal(t, s.Transactions, parsed.Transactions)

	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpDeleteTransaction, Time: metaT0, TransactionalID: "tx", Expect: &TxnStamp{Version: 1, ProducerID: 7}}), ErrStaleTransaction)
	mustApply(t, s, MetaCommand{Op: OpDeleteTransaction, Time: metaT0, TransactionalID: "tx", Expect: &TxnStamp{Version: 2, ProducerID: 7}})
	mustApply(t, s, MetaCommand{Op: OpDeleteTransaction, Time: metaT0, TransactionalID: "tx", Expect: &TxnStamp{Version: 2, ProducerID: 7}})
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpDeleteTransaction, Time: metaT0}), ErrInvalidArgument, "no id")
	require.Empty(t, s.Transactions)
	require.NotContains(t, string(encodeMeta(t, s)), "transactions", "a state with none encodes as before the field existed")

	// The commands travel as JSON.
	raw, err := EncodeMetaCommand(save(first.Stamp(), second))
	require.NoError(t, err)
	c, err := ParseMetaCommand(raw)
	require.NoError(t, err)
	require.Equal(t, second, *c.Transaction)
	require.Equal(t, first.Stamp(), *c.Expect)
}

// validateTxn refuses every state no coordinator writes; the refusal
// wraps ErrInvalidArgument.
func TestTxnValidate(t *testing.T) {
	require.NoError(t, validateTxn(txnSample("tx", 1)))
	for name, edit := range map[string]func(*Transaction){
		"empty id":            func(t *Transaction) { t.ID = "" },
		"long id":             func(t *Transaction) { t.ID = strings.Repeat("x", MaxTransactionalIDLength+1) },
		"not utf-8":           func(t *Transaction) { t.ID = "a\xffb" },
		"negative producer":   func(t *Transaction) { t.ProducerID = -1 },
		"negative epoch":      func(t *Transaction) { t.Epoch = -1 },
		"zero timeout":        func(t *Transaction) { t.Timeout = 0 },
		"long timeout":        func(t *Transaction) { t.Timeout = MaxTransactionTimeout + 1 },
		"version 0":           func(t *Transaction) { t.Version = 0 },
		"unknown state":       func(t *Transaction) { t.State = "paused" },
		"empty with partners": func(t *Transaction) { t.State = TxnEmpty },
		"complete started": func(t *Transaction) {
			t.State, t.Partitions, t.Groups, t.Offsets = TxnCompleteCommit, nil, nil, nil
		},
		"ongoing with nothing": func(t *Transaction) { t.Partitions, t.Groups, t.Offsets = nil, nil, nil },
		"unsorted partitions":  func(t *Transaction) { t.Partitions = []TxnPartition{{"orders", 2}, {"orders", 0}} },
		"partition twice":      func(t *Transaction) { t.Partitions = []TxnPartition{{"orders", 0}, {"orders", 0}} },
		"negative partition":   func(t *Transaction) { t.Partitions = []TxnPartition{{"orders", -1}} },
		"bad topic":            func(t *Transaction) { t.Partitions = []TxnPartition{{"no/slash", 0}} },
		"bad group":            func(t *Transaction) { t.Groups = []string{"a b"} },
		"groups twice":         func(t *Transaction) { t.Groups = []string{"billing", "billing"} },
		"offset of no group":   func(t *Transaction) { t.Offsets[0].Group = "audit" },
		"offset too large":     func(t *Transaction) { t.Offsets[0].Offset = 1 << 63 },
		"offsets twice":        func(t *Transaction) { t.Offsets = append(t.Offsets, t.Offsets[0]) },
	} {
		tx := txnSample("tx", 1)
		edit(&tx)
		require.ErrorIs(t, validateTxn(tx), ErrInvalidArgument, name)
	}
}

// transactions.state is one line of JSON, every state by id;
// ParseTransactions refuses everything EncodeTransactions never writes,
// as a *TransactionsError.
func TestTransactionsFileFormat(t *testing.T) {
	empty, err := EncodeTransactions(nil)
	require.NoError(t, err)
	require.Equal(t, "{\"version\":1,\"transactions\":[]}\n", string(empty))
	txns := map[string]Transaction{"b": txnSample("b", 3), "a": txnSample("a", 1)}
	data, err := EncodeTransactions(txns)
	require.NoError(t, err)
	require.Less(t, bytes.Index(data, []byte(`"id":"a"`)), bytes.Index(data, []byte(`"id":"b"`)), "by id")
	got, err := ParseTransactions(data)
	require.NoError(t, err)
	require.Equal(t, txns, got)

	valid := string(data)
	for _, bad := range []string{
		"",
		"garbage",
		"[]",
		`{"transactions":[]}`,
		`{"version":2,"transactions":[]}`,
		`{"version":1,"transactions":[],"extra":1}`,
		`{"version":1,"transactions":[]} {}`,
		`{"version":1,"transactions":[{"id":"a"}]}`,
		strings.Replace(valid, `"id":"b"`, `"id":"a"`, 1),
		strings.Replace(valid, `"state":"ongoing"`, `"state":"paused"`, 1),
		strings.Replace(valid, `"version":3`, `"version":0`, 1),
		strings.Replace(valid, `"producer_id":7`, `"producer_id":-7`, 1),
		strings.Replace(valid, `"producer_id":7`, `"producer_id":7,"unknown":1`, 1),
		valid[:len(valid)/2],
	} {
		_, err := ParseTransactions([]byte(bad))
		var te *TransactionsError
		require.ErrorAs(t, err, &te, "%q", bad)
	}
}

// A transactions.state that cannot be trusted refuses every request of
// the coordinator with an error naming the file, and is left as it was:
// starting afresh would hand a producer id and epoch out again.
func TestTxnMalformedFile(t *testing.T) {
	for _, content := range []string{"garbage", `{"version":1,"transactions":[{"id":""}]}`, ""} {
		root := t.TempDir()
		path := filepath.Join(root, TransactionsFileName)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		c, err := Open(root)
		require.NoError(t, err, "the rest of the cluster opens")
		_, _, err = c.InitTransactions(context.Background(), "tx", time.Minute, -1, -1)
		var te *TransactionsError
		require.ErrorAs(t, err, &te, "%q", content)
		require.Equal(t, path, te.Path)
		require.Contains(t, err.Error(), path)
		_, err = c.Transactions()
		require.ErrorAs(t, err, &te, "refused again")
		require.ErrorAs(t, c.TickTransactions(context.Background(), time.Now()), &te)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, content, string(got), "the file is never rewritten")
		require.NoError(t, c.Close())
	}
}

// FuzzParseTransactions holds transactions.state's decoder to the
// invariants of every decoder: no input panics, a refusal is a
// *TransactionsError, and what parses encodes to bytes that parse to the
// same states and encode the same again.
func FuzzParseTransactions(f *testing.F) {
	valid, err := EncodeTransactions(map[string]Transaction{"a": txnSample("a", 1), "b": txnSample("b", 2)})
	if err != nil {
		f.Fatal(err)
	}
	empty, err := EncodeTransactions(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add(empty)
	f.Add(valid)
	f.Add(append(bytes.Clone(valid), "garbage"...))
	f.Add(bytes.Replace(valid, []byte(`"epoch":3`), []byte(`"epoch":32768`), 1))
	f.Add([]byte(`{"version":1,"transactions":[{"id":"x","producer_id":9223372036854775807,"epoch":32767,"state":"empty","timeout":900000000000,"updated":"9999-12-31T23:59:59Z","version":18446744073709551615}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		txns, err := ParseTransactions(data)
		if err != nil {
			var te *TransactionsError
			if !errors.As(err, &te) {
				t.Fatalf("refusal %v is not a *TransactionsError", err)
			}
			return
		}
		enc, err := EncodeTransactions(txns)
		if err != nil {
			t.Fatalf("parsed states do not encode: %v", err)
		}
		again, err := ParseTransactions(enc)
		if err != nil {
			t.Fatalf("encoded states do not parse: %v\n%s", err, enc)
		}
		enc2, err := EncodeTransactions(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not canonical: %v\n%s\n%s", err, enc, enc2)
		}
	})
}

// A save whose write fails changes nothing, in the file or in memory, and
// the next one writes again.
func TestTxnFailedWrite(t *testing.T) {
	fsys := logtest.NewFaultFS(nil)
	root := t.TempDir()
	c, err := OpenWithOptions(root, Options{FS: fsys})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	pid, _, err := c.InitTransactions(context.Background(), "tx", time.Minute, -1, -1)
	require.NoError(t, err)
	fsys.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpRename && filepath.Base(path) == TransactionsFileName {
			return logtest.ErrInjected
		}
		return nil
	})
	_, _, err = c.InitTransactions(context.Background(), "tx", time.Minute, -1, -1)
	require.ErrorIs(t, err, logtest.ErrInjected)
	fsys.SetFault(nil)
	all, err := c.Transactions()
	require.NoError(t, err)
	require.Equal(t, int16(0), all[0].Epoch, "the failed save changed nothing")
	got, epoch, err := c.InitTransactions(context.Background(), "tx", time.Minute, -1, -1)
	require.NoError(t, err)
	require.Equal(t, []any{pid, int16(1)}, []any{got, epoch})
	data, err := os.ReadFile(filepath.Join(root, TransactionsFileName))
	require.NoError(t, err)
	parsed, err := ParseTransactions(data)
	require.NoError(t, err)
	require.Equal(t, int16(1), parsed["tx"].Epoch)
}
