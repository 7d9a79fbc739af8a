package kafka

import (
	"errors"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/pystream/pystream/server/group"
)

// The consumer group APIs — JoinGroup, SyncGroup, Heartbeat, LeaveGroup
// (one file each), DescribeGroups, ListGroups, and OffsetCommit's
// membership check — translate their requests into calls of the classic
// coordinator (package server/group) and its errors back into Kafka's
// codes. The coordinator is Kafka's state machine; this side only
// decodes, checks that this listener coordinates groups at all
// (coordinatorCode), and encodes.

// groupErrorCode maps an error of the classic coordinator to its Kafka code.
func groupErrorCode(err error) int16 {
	var mismatch *group.ProtocolMismatchError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, group.ErrInvalidGroupID):
		return kerr.InvalidGroupID.Code
	case errors.Is(err, group.ErrInvalidSessionTimeout):
		return kerr.InvalidSessionTimeout.Code
	case errors.Is(err, group.ErrInconsistentProtocol), errors.As(err, &mismatch):
		// A group whose members speak PyStream's HTTP protocol: Kafka
		// answers a member whose protocols the group's members do not
		// share INCONSISTENT_GROUP_PROTOCOL, which is this case exactly
		// (GROUP_ID_NOT_FOUND would tell the client the group does not
		// exist). Every client reports it and joins again later.
		return kerr.InconsistentGroupProtocol.Code
	case errors.Is(err, group.ErrUnknownMember), errors.Is(err, group.ErrManaged):
		// ErrManaged: a commit without membership while the group has
		// members, which Kafka answers UNKNOWN_MEMBER_ID.
		return kerr.UnknownMemberID.Code
	case errors.Is(err, group.ErrMemberIDRequired):
		return kerr.MemberIDRequired.Code
	case errors.Is(err, group.ErrIllegalGeneration):
		return kerr.IllegalGeneration.Code
	case errors.Is(err, group.ErrRebalanceInProgress):
		return kerr.RebalanceInProgress.Code
	case errors.Is(err, group.ErrFencedInstance):
		return kerr.FencedInstanceID.Code
	case errors.Is(err, group.ErrGroupFull), errors.Is(err, group.ErrTooManyGroups):
		// ErrTooManyGroups: Kafka has no code for a coordinator at its
		// most groups. GROUP_MAX_SIZE_REACHED is a bound of the same
		// kind, and clients report it to their user rather than retry:
		// a retriable code (COORDINATOR_LOAD_IN_PROGRESS,
		// COORDINATOR_NOT_AVAILABLE) would have every refused client
		// hammer a full coordinator without its user knowing why.
		return kerr.GroupMaxSizeReached.Code
	case errors.Is(err, group.ErrNotCoordinator):
		return kerr.NotCoordinator.Code
	case errors.Is(err, group.ErrDeleting):
		// Kafka answers a join to a group being deleted (Dead) so: the
		// client finds the coordinator again and retries.
		return kerr.CoordinatorNotAvailable.Code
	case errors.Is(err, group.ErrClosed):
		return kerr.CoordinatorNotAvailable.Code
	}
	return kerr.UnknownServerError.Code
}

// noteRefusal adds a refused group request's group and error to its
// line in the server's log (logRefused).
func (x *exchange) noteRefusal(groupID string, err error) {
	x.note("group", groupID, "err", err)
}

// coordinatorCode is 0 when this listener coordinates consumer groups
// and transactions, else the code that sends the client back to
// FindCoordinator. The embedded cluster's brokers share one process and
// one coordinator of each, so every one of them coordinates every group
// and transactional id; in a cluster of processes (Config.NodeID) group
// and transaction state lives on one node, the Directory's
// GroupCoordinator, and the others answer NOT_COORDINATOR
// (COORDINATOR_NOT_AVAILABLE while no node is known to be it).
func (s *Server) coordinatorCode() int16 {
	if s.dir == nil {
		return 0
	}
	switch id, here := s.dir.GroupCoordinator(); {
	case here:
		return 0
	case id == 0:
		return kerr.CoordinatorNotAvailable.Code
	default:
		return kerr.NotCoordinator.Code
	}
}

// clientHost is a member's host as Kafka's DescribeGroups shows it:
// "/" and the client's IP address.
func (x *exchange) clientHost() string {
	if x.remote == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(x.remote.String())
	if err != nil {
		return ""
	}
	return "/" + host
}

// clientIDString is the request's client id, "" when null.
func (x *exchange) clientIDString() string {
	if x.clientID == nil {
		return ""
	}
	return *x.clientID
}

// deref is *p, "" when p is nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// nonEmpty is a pointer to s, nil when s is "": a nullable string field.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
