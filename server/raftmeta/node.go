package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// The files in Config.Dir.
const (
	// DBFile is the bolt database holding Raft's log and stable store
	// (current term, last vote).
	DBFile = "raft.db"
	// SnapshotsDir is the directory of Raft's snapshots, of which the
	// newest RetainSnapshots are kept.
	SnapshotsDir = "snapshots"
	// RetainSnapshots is how many snapshots are kept.
	RetainSnapshots = 2
)

// Transport settings: the connections pooled per peer (the I/O deadline
// of one RPC is Config.TransportTimeout).
const (
	transportMaxPool = 3
	// dbOpenTimeout bounds the wait for bolt's file lock, so a second node
	// on the same Dir fails instead of hanging.
	dbOpenTimeout = time.Second
)

// Node is one Raft voter over a StateMachine. Create it with Open; it is
// safe for concurrent use.
type Node struct {
	id     int
	raft   *raft.Raft
	trans  *peerWaitTransport
	store  *raftboltdb.BoltStore
	logger *slog.Logger

	// stopOnce makes stopRaft shut Raft down once; stopErr is the result.
	stopOnce sync.Once
	stopErr  error

	// observations carries leader changes to watch; watched is closed when
	// watch returns.
	observer     *raft.Observer
	observations chan raft.Observation
	watched      chan struct{}

	closeOnce sync.Once
	closeErr  error
	// closed is closed by Close before anything is shut down.
	closed chan struct{}
}

// Open starts the node. On a fresh Dir (no Raft state yet) it bootstraps
// the cluster with Peers, unless Join is set; every node of a new cluster
// bootstraps with the same Peers, and the first election picks a leader.
// On a Dir that has state it recovers from the snapshots and the log, and
// Peers is ignored: the configuration is in the log.
//
// A Config that makes no sense is a *ConfigError. The node owns
// cfg.Listener or cfg.Transport from the call on: when Open fails, it
// closes them.
func Open(cfg Config) (*Node, error) {
	n, err := openConfig(cfg)
	if err != nil {
		if cfg.Listener != nil {
			cfg.Listener.Close()
		}
		closeTransport(cfg.Transport)
	}
	return n, err
}

// openConfig validates cfg and opens the node.
func openConfig(cfg Config) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return open(cfg)
}

// open does Open's work after validation.
func open(cfg Config) (n *Node, err error) {
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("raftmeta: open: %w", err)
	}
	hlog := newHclog(cfg.Logger, "raft")

	store, err := raftboltdb.New(raftboltdb.Options{
		Path:        filepath.Join(cfg.Dir, DBFile),
		BoltOptions: &bbolt.Options{Timeout: dbOpenTimeout},
	})
	if err != nil {
		return nil, fmt.Errorf("raftmeta: open %s: %w", filepath.Join(cfg.Dir, DBFile), err)
	}
	defer func() {
		if err != nil {
			store.Close()
		}
	}()

	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, RetainSnapshots, hlog.Named("snapshot"))
	if err != nil {
		return nil, fmt.Errorf("raftmeta: open %s: %w", filepath.Join(cfg.Dir, SnapshotsDir), err)
	}

	trans := newPeerWaitTransport(newTransport(cfg, hlog), cfg.Logger)
	defer func() {
		if err != nil {
			closeTransport(trans)
		}
	}()

	existing, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return nil, fmt.Errorf("raftmeta: open: %w", err)
	}
	var boot raft.Configuration
	if !existing && !cfg.Join {
		if boot, err = cfg.bootstrap(); err != nil {
			return nil, err
		}
	}

	r, err := raft.NewRaft(cfg.raftConfig(hlog), &fsm{sm: cfg.FSM}, store, store, snaps, trans)
	if err != nil {
		return nil, fmt.Errorf("raftmeta: open: %w", err)
	}
	trans.setLeading(func(term uint64, peer raft.ServerID) bool { return leadsWith(r, term, peer) })
	switch {
	case existing:
		cfg.Logger.Info("raftmeta: recovered from disk", "id", cfg.ID, "dir", cfg.Dir,
			"applied_index", r.AppliedIndex(), "last_index", r.LastIndex())
	case cfg.Join:
		cfg.Logger.Info("raftmeta: started empty, waiting to be added", "id", cfg.ID, "addr", cfg.Advertise)
	default:
		if err := r.BootstrapCluster(boot).Error(); err != nil {
			r.Shutdown().Error()
			return nil, fmt.Errorf("raftmeta: bootstrap: %w", err)
		}
		cfg.Logger.Info("raftmeta: bootstrapped", "id", cfg.ID, "voters", len(boot.Servers))
	}

	n = &Node{
		id:           cfg.ID,
		raft:         r,
		trans:        trans,
		store:        store,
		logger:       cfg.Logger.With("raft_id", cfg.ID),
		observations: make(chan raft.Observation, 16),
		watched:      make(chan struct{}),
		closed:       make(chan struct{}),
	}
	n.observer = raft.NewObserver(n.observations, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.RegisterObserver(n.observer)
	go n.watch()
	return n, nil
}

// watch logs leader changes at Info until Close.
func (n *Node) watch() {
	defer close(n.watched)
	for o := range n.observations {
		lo := o.Data.(raft.LeaderObservation)
		if lo.LeaderID == "" {
			n.logger.Info("raftmeta: no leader")
			continue
		}
		n.logger.Info("raftmeta: leader elected", "leader_id", nodeID(lo.LeaderID), "leader_addr", string(lo.LeaderAddr))
	}
}

// ID returns this node's id.
func (n *Node) ID() int { return n.id }

// IsLeader reports whether this node is the leader now. Leadership can be
// lost at any moment; Apply is what proves it.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Term is the Raft term this node is in: a leader that loses its place
// and wins it again leads in a later term.
func (n *Node) Term() uint64 { return n.raft.CurrentTerm() }

// Leader returns the leader's id and address as this node knows them, or
// 0 and "" when none is known or the node is closed.
func (n *Node) Leader() (id int, addr string) {
	select {
	case <-n.closed:
		return 0, ""
	default:
	}
	a, sid := n.raft.LeaderWithID()
	if a == "" || sid == "" {
		return 0, ""
	}
	if id = nodeID(sid); id == 0 {
		return 0, ""
	}
	return id, string(a)
}

// Leadership delivers true when this node becomes the leader and false
// when it stops being it. It never blocks Raft: the channel holds only
// the latest change, so a slow reader may miss a lost-and-regained pair
// and see true twice. Nobody needs to read it.
func (n *Node) Leadership() <-chan bool { return n.raft.LeaderCh() }

// AppliedIndex is the index of the last entry the state machine has seen
// (including Raft's own entries, which do not reach StateMachine.Apply).
func (n *Node) AppliedIndex() uint64 { return n.raft.AppliedIndex() }

// Apply replicates cmd and returns the state machine's result once a
// majority holds it and this node has applied it. It works on the leader
// only; elsewhere it returns a *NotLeaderError naming the leader. A
// refusal by the state machine comes back as a *RefusedError that unwraps
// to the state machine's error.
//
// When ctx ends first, or with ErrLeadershipLost, the outcome is unknown:
// the command may still commit.
func (n *Node) Apply(ctx context.Context, cmd []byte) ([]byte, error) {
	timeout, err := enqueueTimeout(ctx)
	if err != nil {
		return nil, fmt.Errorf("raftmeta: apply: %w", err)
	}
	f := n.raft.Apply(cmd, timeout)
	if err := wait(ctx, f); err != nil {
		return nil, n.failure("apply", err)
	}
	res, ok := f.Response().(applyResult)
	if !ok {
		return nil, fmt.Errorf("raftmeta: apply: unexpected response %T", f.Response())
	}
	if res.err != nil {
		return res.result, &RefusedError{Index: f.Index(), Err: res.err}
	}
	return res.result, nil
}

// Barrier waits until the state machine has applied every command
// committed before it. Leader only. A new leader calls it before it
// serves reads from its state machine.
func (n *Node) Barrier(ctx context.Context) error {
	timeout, err := enqueueTimeout(ctx)
	if err != nil {
		return fmt.Errorf("raftmeta: barrier: %w", err)
	}
	if err := wait(ctx, n.raft.Barrier(timeout)); err != nil {
		return n.failure("barrier", err)
	}
	return nil
}

// Close stops Raft and waits for its goroutines, closes its transport
// (Config.Transport, or the network transport and so Config.Listener) and
// the bolt store. Close is idempotent; later calls return the first one's
// error. Operations after Close fail with ErrClosed.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		close(n.closed)
		err := n.stopRaft()
		n.raft.DeregisterObserver(n.observer)
		close(n.observations)
		<-n.watched
		if err != nil {
			err = fmt.Errorf("raftmeta: close: %w", err)
		}
		if serr := n.store.Close(); serr != nil {
			err = errors.Join(err, fmt.Errorf("raftmeta: close %s: %w", DBFile, serr))
		}
		n.closeErr = err
	})
	return n.closeErr
}

// stopRaft shuts Raft down, waits until its goroutines have returned and
// closes the transport; later calls return the first one's result.
//
// Only the first hashicorp Shutdown waits and closes the transport: a
// later one returns at once. So no other code may shut this Raft down
// first, which is why raftConfig turns ShutdownOnRemove off and
// RemoveVoter calls stopRaft when the leader removed itself.
func (n *Node) stopRaft() error {
	n.stopOnce.Do(func() {
		n.trans.stopWaiting() // Shutdown waits for Raft's loops, a retried append among them
		n.stopErr = n.raft.Shutdown().Error()
		// That first Shutdown closed the transport already; closing it
		// again is harmless, and keeps it from outliving the node should
		// Raft ever have been shut down by someone else first.
		closeTransport(n.trans)
	})
	return n.stopErr
}

// leadsWith reports whether r leads in term with peer among the servers
// of its latest configuration (peerWaitTransport's test).
func leadsWith(r *raft.Raft, term uint64, peer raft.ServerID) bool {
	if r.State() != raft.Leader || r.CurrentTerm() != term {
		return false
	}
	f := r.GetConfiguration() // answered at once, from the latest configuration
	if f.Error() != nil {
		return false
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == peer {
			return true
		}
	}
	return false
}

// failure maps an error of a hashicorp future to this package's errors.
func (n *Node) failure(op string, err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		id, addr := n.Leader()
		return &NotLeaderError{LeaderID: id, LeaderAddr: addr}
	case errors.Is(err, raft.ErrLeadershipLost):
		return fmt.Errorf("raftmeta: %s: %w", op, ErrLeadershipLost)
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("raftmeta: %s: %w", op, ErrClosed)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("raftmeta: %s: %w", op, context.DeadlineExceeded)
	}
	return fmt.Errorf("raftmeta: %s: %w", op, err)
}

// enqueueTimeout is the hashicorp timeout for ctx: the time left to its
// deadline, or 0 (no limit) without one. It fails when ctx already ended.
func enqueueTimeout(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0, nil
	}
	left := time.Until(deadline)
	if left <= 0 {
		return 0, context.DeadlineExceeded
	}
	return left, nil
}

// wait waits for f or for ctx to end. A future Raft resolves in any case
// (commit, lost leadership or shutdown), so the goroutine left behind
// after ctx ends does not leak for long.
func wait(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
