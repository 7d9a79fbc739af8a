package clusternode

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/pystream/pystream/cluster"
)

// fsm is the Raft state machine: a cluster.MetaState behind a lock, with a
// way to wait for the next change. It is safe for concurrent use.
type fsm struct {
	// mu guards the fields below.
	mu      sync.RWMutex
	state   *cluster.MetaState
	applied uint64
	// changed is closed (and replaced) at every apply and restore.
	changed chan struct{}
	// notify, once set (setNotify), is called after every apply and
	// restore, outside the lock.
	notify func()
}

// setNotify makes fn be called after every apply and restore from now on.
func (f *fsm) setNotify(fn func()) {
	f.mu.Lock()
	f.notify = fn
	f.mu.Unlock()
}

func newFSM() *fsm {
	return &fsm{state: &cluster.MetaState{}, changed: make(chan struct{})}
}

// applied is what Apply hands back to the proposer: the command's result
// and the Raft index it was applied at, so that a proposer elsewhere can
// wait until its own copy has applied it too.
type appliedResult struct {
	Index  uint64             `json:"index"`
	Result cluster.MetaResult `json:"result"`
}

// Apply applies one committed command (raftmeta.StateMachine).
func (f *fsm) Apply(index uint64, cmd []byte) ([]byte, error) {
	c, err := cluster.ParseMetaCommand(cmd)
	if err != nil {
		f.advance(index)
		return nil, err
	}
	f.mu.Lock()
	res, err := f.state.Apply(c)
	notify := f.notify
	f.mu.Unlock()
	// What follows the state (the controller's failover delay) follows
	// it before the command counts as applied here: a caller waiting for
	// its command to be applied on this node then finds both done.
	if notify != nil {
		notify()
	}
	f.mu.Lock()
	f.applied = index
	ch := f.changed
	f.changed = make(chan struct{})
	f.mu.Unlock()
	close(ch)
	if err != nil {
		return nil, err
	}
	return json.Marshal(appliedResult{Index: index, Result: res})
}

func (f *fsm) advance(index uint64) {
	f.mu.Lock()
	f.applied = index
	f.mu.Unlock()
}

// Snapshot encodes the whole state (raftmeta.StateMachine).
func (f *fsm) Snapshot() ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return cluster.EncodeMetaState(f.state)
}

// Restore replaces the state with a snapshot's (raftmeta.StateMachine).
func (f *fsm) Restore(data []byte) error {
	s, err := cluster.ParseMetaState(data)
	if err != nil {
		return fmt.Errorf("clusternode: restore metadata snapshot: %w", err)
	}
	f.mu.Lock()
	f.state = s
	notify := f.notify
	f.mu.Unlock()
	if notify != nil {
		notify() // before the change is announced, as in Apply
	}
	f.mu.Lock()
	ch := f.changed
	f.changed = make(chan struct{})
	f.mu.Unlock()
	close(ch)
	return nil
}

// poke wakes whoever waits on the next change without changing anything:
// what depends on more than the state (the node's readiness) changed.
func (f *fsm) poke() {
	f.mu.Lock()
	ch := f.changed
	f.changed = make(chan struct{})
	f.mu.Unlock()
	close(ch)
}

// read runs fn on the state under the read lock; fn must not keep it.
func (f *fsm) read(fn func(s *cluster.MetaState)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.state)
}

// node returns one broker's addresses.
func (f *fsm) node(id int) (n cluster.NodeInfo, ok bool) {
	f.read(func(s *cluster.MetaState) { n, ok = s.Nodes[id] })
	return n, ok
}

// watch returns the channel the next change closes, and the index applied.
func (f *fsm) watch() (<-chan struct{}, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.changed, f.applied
}

// waitApplied waits until the state has applied index. raftApplied is
// Raft's own count, which a snapshot's restore advances too (Restore does
// not learn the index it stands for).
func (f *fsm) waitApplied(ctx context.Context, index uint64, raftApplied func() uint64) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ch, applied := f.watch()
		if applied >= index || raftApplied() >= index {
			return nil
		}
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("clusternode: waiting for metadata index %d (applied %d): %w", index, applied, ctx.Err())
		}
	}
}
