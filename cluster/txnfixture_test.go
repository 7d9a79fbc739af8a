package cluster

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The transaction coordinator's tests run over both stores it is written
// for: the embedded one (transactions.state) and cluster mode's
// replicated state (MetaState.Transactions), here a MetaState in the test
// process that every change reaches as a command encoded and parsed as
// JSON, as a Raft log carries it.

// txnModes names the stores.
var txnModes = []string{"embedded", "metastate"}

// metaStateStore is a MetaStore that keeps the transactions as cluster
// mode does: in a MetaState, changed by OpSaveTransaction and
// OpDeleteTransaction through their wire form, every command kept in log
// so that a test can replay it into a fresh state. Everything else is the
// embedded store's.
type metaStateStore struct {
	*fileStore
	// mu guards state and log.
	mu    sync.Mutex
	state *MetaState
	log   [][]byte
}

func (m *metaStateStore) apply(c MetaCommand) error {
	c.Time = metaT0
	raw, err := EncodeMetaCommand(c)
	if err != nil {
		return err
	}
	parsed, err := ParseMetaCommand(raw)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = append(m.log, raw)
	_, err = m.state.Apply(parsed)
	return err
}

func (m *metaStateStore) SaveTransaction(ctx context.Context, expect TxnStamp, t Transaction) error {
	return m.apply(MetaCommand{Op: OpSaveTransaction, Transaction: &t, Expect: &expect})
}

func (m *metaStateStore) DeleteTransaction(ctx context.Context, id string, expect TxnStamp) error {
	return m.apply(MetaCommand{Op: OpDeleteTransaction, TransactionalID: id, Expect: &expect})
}

func (m *metaStateStore) Transaction(id string) (Transaction, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.state.Transactions[id]
	return cloneTxn(t), ok, nil
}

func (m *metaStateStore) Transactions() ([]Transaction, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedTransactions(m.state.Transactions), nil
}

// replay is a fresh state that applied every command of the log, as a
// node that replays the Raft log builds it; it must encode as the state
// does, and survive a snapshot.
func (m *metaStateStore) replay(t *testing.T) *MetaState {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	fresh := &MetaState{}
	for _, raw := range m.log {
		c, err := ParseMetaCommand(raw)
		require.NoError(t, err)
		_, _ = fresh.Apply(c) // a refused command is refused again
	}
	require.Equal(t, string(encodeMeta(t, m.state)), string(encodeMeta(t, fresh)), "a replay of the log builds the same state")
	restored, err := ParseMetaState(encodeMeta(t, fresh))
	require.NoError(t, err)
	require.Equal(t, string(encodeMeta(t, fresh)), string(encodeMeta(t, restored)), "a snapshot restores the same state")
	return restored
}

// txnClock is the fixture's clock, moved by the test.
type txnClock struct {
	// mu guards now.
	mu  sync.Mutex
	now time.Time
}

func (k *txnClock) Now() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.now
}

func (k *txnClock) Advance(d time.Duration) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.now = k.now.Add(d)
	return k.now
}

// txnFixture is a cluster of three brokers with topic "orders" (three
// partitions, replication factor 3), over one of txnModes, on a clock
// the test moves.
type txnFixture struct {
	t     *testing.T
	mode  string
	root  string
	clock *txnClock
	c     *Cluster
	// meta is the metastate mode's store (its log survives a reopen).
	meta *metaStateStore
}

// forTxnModes runs fn over each store.
func forTxnModes(t *testing.T, fn func(t *testing.T, f *txnFixture)) {
	for _, mode := range txnModes {
		t.Run(mode, func(t *testing.T) {
			f := &txnFixture{t: t, mode: mode, root: t.TempDir(), clock: &txnClock{now: metaT0}}
			f.open(nil)
			require.NoError(t, f.c.CreateTopic("orders", 3, 3))
			fn(t, f)
		})
	}
}

// open opens the cluster at the fixture's root with brokers 1..3; in
// metastate mode over state (nil: an empty one), the log kept.
func (f *txnFixture) open(state *MetaState) {
	t := f.t
	// A follower that missed a write while stopped is brought level by
	// the next one, as the embedded server's controller would.
	c, err := OpenWithOptions(f.root, Options{CatchUpOnWrite: true, Broker: BrokerOptions{Now: f.clock.Now}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 3; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	if f.mode == "metastate" {
		if state == nil {
			state = &MetaState{}
		}
		m := &metaStateStore{fileStore: c.files, state: state}
		if f.meta != nil {
			m.log = f.meta.log
		}
		f.meta = m
		c.store = m
	}
	f.c = c
}

// reopen closes the cluster and opens it again: from transactions.state
// (embedded), from a replay of the command log and a snapshot of it
// (metastate).
func (f *txnFixture) reopen() {
	require.NoError(f.t, f.c.Close())
	var state *MetaState
	if f.meta != nil {
		state = f.meta.replay(f.t)
	}
	f.open(state)
}

// ctx is a context for one request.
func (f *txnFixture) ctx() context.Context { return f.t.Context() }

// init is InitTransactions with no producer id given, required to
// succeed.
func (f *txnFixture) init(id string, timeout time.Duration) (int64, int16) {
	f.t.Helper()
	pid, epoch, err := f.c.InitTransactions(f.ctx(), id, timeout, -1, -1)
	require.NoError(f.t, err)
	return pid, epoch
}

// txn is id's state, required to exist.
func (f *txnFixture) txn(id string) Transaction {
	f.t.Helper()
	all, err := f.c.Transactions()
	require.NoError(f.t, err)
	for _, t := range all {
		if t.ID == id {
			return t
		}
	}
	f.t.Fatalf("no state of transactional id %q", id)
	return Transaction{}
}

// tick runs TickTransactions at the fixture's clock.
func (f *txnFixture) tick() error { return f.c.TickTransactions(f.ctx(), f.clock.Now()) }

// requireTxnErr requires err to be a *TxnError that wraps want.
func requireTxnErr(t *testing.T, err error, want error, msgAndArgs ...any) {
	t.Helper()
	var te *TxnError
	require.ErrorAs(t, err, &te, msgAndArgs...)
	require.ErrorIs(t, err, want, msgAndArgs...)
}
