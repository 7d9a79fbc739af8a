package raftmeta

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// StateMachine is what a Node replicates. Raft calls Apply, Snapshot and
// Restore from one goroutine, one call at a time, so an implementation
// needs no lock of its own for them (it needs one if other goroutines read
// its state).
type StateMachine interface {
	// Apply applies one committed command at its Raft index. It must be
	// deterministic: every node applies the same commands in the same
	// order and must reach the same state. A non-nil error is a
	// deterministic refusal (the state is unchanged); it is handed back
	// to the proposer as a *RefusedError, not treated as a failure of the
	// node.
	Apply(index uint64, cmd []byte) (result []byte, err error)
	// Snapshot returns the whole state, encoded. The bytes must not be
	// changed afterwards: they are written out while Apply goes on.
	Snapshot() ([]byte, error)
	// Restore replaces the whole state with one that Snapshot returned.
	Restore(data []byte) error
}

// applyResult is what fsm.Apply hands back to the proposer through Raft's
// future.
type applyResult struct {
	result []byte
	err    error
}

// fsm adapts a StateMachine to raft.FSM.
type fsm struct {
	sm StateMachine
}

var (
	_ raft.FSM         = (*fsm)(nil)
	_ raft.FSMSnapshot = (*fsmSnapshot)(nil)
)

// Apply is called by Raft for each committed command entry.
func (f *fsm) Apply(l *raft.Log) any {
	result, err := f.sm.Apply(l.Index, l.Data)
	return applyResult{result: result, err: err}
}

// Snapshot takes the state machine's bytes now, between two Applies; the
// snapshot writes them out later, while Apply goes on.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	data, err := f.sm.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("raftmeta: snapshot: %w", err)
	}
	return &fsmSnapshot{data: data}, nil
}

// Restore replaces the state with a snapshot's bytes.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("raftmeta: restore: read snapshot: %w", err)
	}
	if err := f.sm.Restore(data); err != nil {
		return fmt.Errorf("raftmeta: restore: %w", err)
	}
	return nil
}

// fsmSnapshot is one snapshot's bytes.
type fsmSnapshot struct {
	data []byte
}

// Persist writes the bytes to the sink; on error it cancels the sink so
// no partial snapshot is kept.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s.data); err != nil {
		sink.Cancel()
		return fmt.Errorf("raftmeta: persist snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("raftmeta: persist snapshot: %w", err)
	}
	return nil
}

// Release does nothing: the bytes are garbage collected.
func (s *fsmSnapshot) Release() {}
