package backend

import (
	"errors"
	"fmt"
)

// The errors of a backend in PyStream's terms, beyond the cluster's own
// (cluster.ErrUnknownTopic and the rest, which both modes return as they
// are). The cluster-mode implementation marks its node's errors with them
// (Mark), so that the protocols above answer both modes alike without
// knowing which one serves them.
var (
	// ErrNotInThisMode is wrapped by an operation the serving mode does
	// not offer; the error's text says what to do instead. It matches
	// errors.ErrUnsupported too.
	ErrNotInThisMode = fmt.Errorf("backend: not offered in this mode: %w", errors.ErrUnsupported)
	// ErrNoController: the cluster has no controller — its metadata
	// group has no leader (an election is under way, or a majority of
	// the nodes is unreachable). Retrying may succeed.
	ErrNoController = errors.New("backend: the cluster has no controller")
	// ErrLeaderMoved: the metadata group's leadership moved while the
	// request was on its way. Retrying may succeed.
	ErrLeaderMoved = errors.New("backend: the metadata group's leadership moved")
	// ErrOutcomeUnknown: the metadata group's leader lost its place
	// before a change committed; it may or may not have taken effect.
	ErrOutcomeUnknown = errors.New("backend: the change's outcome is unknown")
	// ErrNodeClosed: this node is closed (shutting down, or removed from
	// the metadata group).
	ErrNodeClosed = errors.New("backend: this node is closed")
	// ErrPeerBadRequest and ErrPeerUnavailable are the refusals of
	// another node a request was forwarded to: it found the request
	// malformed, or cannot serve it now (a *PeerError carries its words).
	ErrPeerBadRequest  = errors.New("backend: the node asked refused the request as malformed")
	ErrPeerUnavailable = errors.New("backend: the node asked cannot serve the request now")
	// ErrNoHealingSwitch: automatic healing cannot be switched, because
	// no controller loop runs in this server.
	ErrNoHealingSwitch = errors.New("backend: this server runs no controller to switch")
)

// Marked is an implementation's error marked with the backend sentinel
// that says what it means: its text is the error's own, and errors.Is
// finds both the error's chain and Kind.
type Marked struct {
	// Err is the implementation's error, whole.
	Err error
	// Kind is one of this package's sentinels.
	Kind error
}

func (e *Marked) Error() string { return e.Err.Error() }

// Unwrap returns Err, then Kind: a walk of the first errors of the chain
// (an operation that took effect but not its journal entry is told by
// its first error) sees Err's.
func (e *Marked) Unwrap() []error { return []error{e.Err, e.Kind} }

// Mark marks err with kind; nil stays nil.
func Mark(err, kind error) error {
	if err == nil {
		return nil
	}
	return &Marked{Err: err, Kind: kind}
}

// PeerError is a refusal by another node a request was forwarded to, in
// its own words.
type PeerError struct {
	// Message is the peer's text.
	Message string
	// Kind is ErrPeerBadRequest or ErrPeerUnavailable.
	Kind error
	// Err is the error as the transport returned it.
	Err error
}

func (e *PeerError) Error() string { return e.Err.Error() }

// Unwrap returns Err, then Kind.
func (e *PeerError) Unwrap() []error { return []error{e.Err, e.Kind} }
