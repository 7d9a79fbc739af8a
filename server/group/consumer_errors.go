package group

import (
	"errors"
	"fmt"
)

// The consumer groups' sentinels, beside those both protocols share
// (ErrUnknownMember, ErrGroupFull: classic_errors.go). *MemberError
// matches ErrFencedMemberEpoch, ErrUnknownMember and ErrNotOwned;
// an invalid heartbeat wraps ErrInvalidHeartbeat with what is wrong.
var (
	// ErrFencedMemberEpoch: the member epoch a heartbeat or a commit sent
	// is not the member's current one (Kafka's FENCED_MEMBER_EPOCH). The
	// member must give up its partitions and join again (epoch 0).
	ErrFencedMemberEpoch = errors.New("group: fenced member epoch")
	// ErrNotOwned: a commit for a partition the member does not hold.
	ErrNotOwned = errors.New("group: partition not held by the member")
	// ErrInvalidHeartbeat: a heartbeat that breaks the protocol's rules
	// (an epoch below -1, a join without topics, ...).
	ErrInvalidHeartbeat = errors.New("group: invalid heartbeat")
	// ErrInvalidLeases: saved leases that ParseLeases cannot read.
	ErrInvalidLeases = errors.New("group: invalid saved leases")
	// ErrNotSaved: a heartbeat whose answer would hand out partitions
	// could not save the group's leases first (ConsumerConfig.Save), so
	// it is not answered; the member tries again.
	ErrNotSaved = errors.New("group: leases not saved")
)

// MemberError is a refusal of one member's request: Err is
// ErrFencedMemberEpoch, ErrUnknownMember or ErrNotOwned, and the fields
// say which member, epoch and partition.
type MemberError struct {
	Group    string
	MemberID string
	// Epoch is the member epoch the request sent; Current the member's
	// epoch at the coordinator (ErrFencedMemberEpoch only).
	Epoch, Current int32
	// Topic and Partition are the commit's (ErrNotOwned only).
	Topic     string
	Partition int32
	Err       error
}

// Error is the one wording of a member's refusal, which the HTTP API
// answers as it is.
func (e *MemberError) Error() string {
	switch e.Err {
	case ErrFencedMemberEpoch:
		return fmt.Sprintf("group %q: member %q sent member epoch %d, its epoch is %d: it is fenced; it must give up its partitions and join again (member_epoch 0)",
			e.Group, e.MemberID, e.Epoch, e.Current)
	case ErrNotOwned:
		return fmt.Sprintf("group %q: member %q does not hold %s/%d; only the member assigned a partition commits it (its last heartbeat answer lists them)",
			e.Group, e.MemberID, e.Topic, e.Partition)
	case ErrGroupFull:
		return fmt.Sprintf("group %q has %d members, the most a group admits", e.Group, MaxMembers)
	}
	return fmt.Sprintf("group %q has no member %q (it left, its session timed out, or it never joined); join again with member_epoch 0", e.Group, e.MemberID)
}

// Unwrap returns the sentinel.
func (e *MemberError) Unwrap() error { return e.Err }

// invalid is an ErrInvalidHeartbeat saying what is wrong.
func invalid(format string, args ...any) error {
	return fmt.Errorf("group: %s: %w", fmt.Sprintf(format, args...), ErrInvalidHeartbeat)
}
