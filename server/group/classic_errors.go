package group

import "errors"

// Sentinel errors of the classic coordinator. Each is one of Kafka's
// group error codes, named as Kafka names it; the Kafka listener maps
// them back to their codes, and every error a ClassicCoordinator method returns
// wraps one of them or is a *ProtocolMismatchError.
var (
	// ErrInvalidGroupID is a group id that is not a valid consumer id
	// (ValidateID), or a group instance id that breaks the same rule
	// (Kafka's INVALID_GROUP_ID).
	ErrInvalidGroupID = errors.New("group: invalid group id")
	// ErrInvalidSessionTimeout is a session timeout outside the
	// coordinator's bounds (INVALID_SESSION_TIMEOUT).
	ErrInvalidSessionTimeout = errors.New("group: session timeout outside the coordinator's bounds")
	// ErrInconsistentProtocol is a member whose protocol type or
	// protocols share nothing with the group's members, or a join with
	// none (INCONSISTENT_GROUP_PROTOCOL).
	ErrInconsistentProtocol = errors.New("group: protocols incompatible with the group's members")
	// ErrUnknownMember is a member id the group does not have
	// (UNKNOWN_MEMBER_ID): the member joins again without one.
	ErrUnknownMember = errors.New("group: unknown member id")
	// ErrMemberIDRequired answers a new member's first join (JoinGroup
	// v4+, KIP-394): it joins again with the member id it was given
	// (MEMBER_ID_REQUIRED).
	ErrMemberIDRequired = errors.New("group: join again with the member id given")
	// ErrIllegalGeneration is a generation that is not the group's
	// (ILLEGAL_GENERATION): the member joins again.
	ErrIllegalGeneration = errors.New("group: stale generation")
	// ErrRebalanceInProgress tells a member that the group is
	// rebalancing and it must join again (REBALANCE_IN_PROGRESS).
	ErrRebalanceInProgress = errors.New("group: rebalance in progress")
	// ErrFencedInstance is a request from a static member whose group
	// instance id another member id has taken since (FENCED_INSTANCE_ID).
	ErrFencedInstance = errors.New("group: instance id taken by a newer member")
	// ErrGroupFull is a join past the coordinator's members per group
	// (GROUP_MAX_SIZE_REACHED).
	ErrGroupFull = errors.New("group: group at its most members")
	// ErrTooManyGroups is a join that would start a group when the
	// coordinator keeps its most groups already (ClassicConfig.MaxGroups,
	// ConsumerConfig.MaxGroups). Kafka has no code of its own for it; the
	// Kafka listener answers GROUP_MAX_SIZE_REACHED, which clients report
	// to their user rather than retry.
	ErrTooManyGroups = errors.New("group: the coordinator keeps its most groups")
	// ErrNotCoordinator answers a request waiting in a coordinator that
	// Clear emptied: this server no longer coordinates the group
	// (NOT_COORDINATOR: the client finds the coordinator again).
	ErrNotCoordinator = errors.New("group: this server no longer coordinates the group")
	// ErrClosed answers a request waiting in a coordinator that closes,
	// or whose caller went away (COORDINATOR_NOT_AVAILABLE: the client
	// finds the coordinator again).
	ErrClosed = errors.New("group: coordinator closed")
)
