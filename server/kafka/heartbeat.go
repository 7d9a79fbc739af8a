package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/group"
)

// heartbeat answers Heartbeat (key 12) v0-v4: it keeps a member's
// session alive, and REBALANCE_IN_PROGRESS tells it to join again
// (group.ClassicCoordinator.Heartbeat). v3+ carries the group instance id.
func (s *Server) heartbeat(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.HeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	err := s.groups.Heartbeat(req.Group, req.Generation, group.MemberRef{MemberID: req.MemberID, InstanceID: deref(req.InstanceID)})
	resp.ErrorCode = x.code(groupErrorCode(err))
	return resp
}

func failHeartbeat(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.HeartbeatRequest).ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = code
	return resp
}
