package group

import (
	"errors"
	"fmt"
	"sync"
)

// ErrManaged is the answer to a commit made without membership (Kafka's
// generation -1, or PUT /api/consumers/{id}/offsets/...) for a group
// that has members: their coordinator owns the group's progress while
// they are there.
var ErrManaged = errors.New("group has members; commit as one of them")

// ErrDeleting is the answer to a member that joins a group whose offsets
// are being deleted (Registry.Hold): it tries again in a moment.
var ErrDeleting = errors.New("group: its committed offsets are being deleted; join again in a moment")

// Protocol is the membership protocol a group speaks.
type Protocol string

// The protocols of a group.
const (
	// Classic is Kafka's join/sync protocol: the group's leader assigns.
	Classic Protocol = "classic"
	// Consumer is the HTTP heartbeat protocol: the coordinator assigns.
	Consumer Protocol = "consumer"
)

// ProtocolMismatchError is the answer to a member that joins a group
// whose members speak the other protocol.
type ProtocolMismatchError struct {
	Group string
	// Has is the protocol the group's members speak; Want the one the
	// refused member asked for.
	Has, Want Protocol
}

func (e *ProtocolMismatchError) Error() string {
	return fmt.Sprintf("group %q has %s members; a %s member cannot join it until they leave", e.Group, e.Has, e.Want)
}

// Registry records which protocol each group with members speaks, so
// that the two coordinators never share a group. It is safe for
// concurrent use.
type Registry struct {
	// mu guards owners and held.
	mu sync.Mutex
	// owners maps a group with members to its protocol.
	owners map[string]Protocol
	// held are the groups without members whose offsets are being
	// deleted: no member may join them meanwhile.
	held map[string]bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{owners: map[string]Protocol{}, held: map[string]bool{}}
}

// Claim marks group as speaking p. It succeeds when the group has no
// members or already speaks p, and returns *ProtocolMismatchError
// otherwise. A coordinator claims a group before it admits its first
// member. A group held for deletion (Hold) is ErrDeleting.
func (r *Registry) Claim(group string, p Protocol) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held[group] {
		return fmt.Errorf("group %q: %w", group, ErrDeleting)
	}
	if has, ok := r.owners[group]; ok && has != p {
		return &ProtocolMismatchError{Group: group, Has: has, Want: p}
	}
	r.owners[group] = p
	return nil
}

// Release frees group when it speaks p: a coordinator releases a group
// once its last member has left or timed out. Releasing a group of the
// other protocol changes nothing.
func (r *Registry) Release(group string, p Protocol) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owners[group] == p {
		delete(r.owners, group)
	}
}

// Protocol is the protocol group speaks; ok is false when it has no
// members.
func (r *Registry) Protocol(group string) (p Protocol, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok = r.owners[group]
	return p, ok
}

// Hold keeps group without members while its committed offsets are
// deleted: until release is called, a member of either protocol that
// would join it is refused with ErrDeleting. A group with members is
// refused with an error wrapping ErrManaged, and one already held with
// ErrDeleting; release is then a no-op.
func (r *Registry) Hold(group string) (release func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.owners[group]; ok {
		return func() {}, fmt.Errorf("group %q (%s): %w", group, p, ErrManaged)
	}
	if r.held[group] {
		return func() {}, fmt.Errorf("group %q: %w", group, ErrDeleting)
	}
	r.held[group] = true
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.held, group)
	}, nil
}

// Unmanaged returns nil when group has no members, so that a commit made
// without membership may store its offset, and an error wrapping
// ErrManaged otherwise. It is the one rule both protocols' plain commits
// follow.
func (r *Registry) Unmanaged(group string) error {
	if p, ok := r.Protocol(group); ok {
		return fmt.Errorf("group %q (%s): %w", group, p, ErrManaged)
	}
	return nil
}
