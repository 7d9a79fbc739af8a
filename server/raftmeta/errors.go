package raftmeta

import (
	"errors"
	"fmt"
)

// The errors of a Node. Each is matched with errors.Is; NotLeaderError,
// RefusedError and ConfigError carry the details.
var (
	// ErrNotLeader is matched by every *NotLeaderError: the operation
	// (Apply, Barrier, AddVoter, RemoveVoter) runs on the leader only.
	ErrNotLeader = errors.New("raftmeta: not the leader")

	// ErrLeadershipLost: the node lost leadership after it had appended the
	// command to its log and before the command committed. The outcome is
	// unknown: a later leader may still commit it. Retry only commands the
	// state machine can recognise as repeated.
	ErrLeadershipLost = errors.New("raftmeta: leadership lost before the command committed; its outcome is unknown")

	// ErrClosed: the node was closed, or Raft shut down (for example after
	// this node was removed from the configuration).
	ErrClosed = errors.New("raftmeta: node closed")

	// ErrInvalidConfig is matched by every *ConfigError.
	ErrInvalidConfig = errors.New("raftmeta: invalid config")

	// ErrInvalidArgument: AddVoter or RemoveVoter was given a node id
	// below 1 or an empty address.
	ErrInvalidArgument = errors.New("raftmeta: invalid argument")
)

// NotLeaderError reports that an operation reached a node that is not the
// leader, and names the leader as this node knows it.
type NotLeaderError struct {
	// LeaderID is the leader's node id, or 0 when no leader is known (an
	// election is under way or this node is cut off).
	LeaderID int
	// LeaderAddr is the leader's internal address, or "" when unknown.
	LeaderAddr string
}

func (e *NotLeaderError) Error() string {
	if e.LeaderID == 0 {
		return "raftmeta: not the leader; no leader is known"
	}
	return fmt.Sprintf("raftmeta: not the leader; the leader is node %d at %s", e.LeaderID, e.LeaderAddr)
}

// Unwrap returns ErrNotLeader.
func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }

// RefusedError is a command the state machine refused: it committed at
// Index, and StateMachine.Apply returned Err, leaving the state unchanged
// on every node alike. It is the proposer's answer, not a failure of the
// node.
type RefusedError struct {
	// Index is the Raft index the command committed at.
	Index uint64
	// Err is the state machine's error, unchanged.
	Err error
}

// Error returns the state machine's message unchanged, so a proposer can
// show it as it is.
func (e *RefusedError) Error() string { return e.Err.Error() }

// Unwrap returns the state machine's error, so errors.Is and errors.As see
// the state machine's own sentinels and types.
func (e *RefusedError) Unwrap() error { return e.Err }

// ConfigError reports a Config that Open refuses.
type ConfigError struct {
	// Field is the Config field at fault, e.g. "ID" or "Peers".
	Field string
	// Reason says what is wrong with it.
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("raftmeta: invalid config: %s: %s", e.Field, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }
