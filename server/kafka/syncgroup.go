package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/group"
)

// syncGroup answers SyncGroup (key 14) v0-v5: the leader brings the
// generation's assignment and every member gets its part
// (group.ClassicCoordinator.Sync). A follower's answer waits for the
// leader's sync, on this connection. v3+ carries the group instance id;
// v5+ the protocol type and name, which must be the group's.
func (s *Server) syncGroup(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.SyncGroupRequest)
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	sr := group.SyncRequest{Group: req.Group, MemberRef: group.MemberRef{MemberID: req.MemberID, InstanceID: deref(req.InstanceID)},
		Generation: req.Generation, ProtocolType: deref(req.ProtocolType), Protocol: deref(req.Protocol)}
	if len(req.GroupAssignment) > 0 {
		sr.Assignments = make(map[string][]byte, len(req.GroupAssignment))
		for _, a := range req.GroupAssignment {
			sr.Assignments[a.MemberID] = a.MemberAssignment
		}
	}
	res, err := s.groups.Sync(x.ctx, sr)
	if err != nil {
		x.noteRefusal(req.Group, err)
		resp.ErrorCode = x.code(groupErrorCode(err))
		return resp
	}
	resp.ProtocolType, resp.Protocol = kmsg.StringPtr(res.ProtocolType), kmsg.StringPtr(res.Protocol)
	resp.MemberAssignment = res.Assignment
	return resp
}

func failSyncGroup(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.SyncGroupRequest).ResponseKind().(*kmsg.SyncGroupResponse)
	resp.ErrorCode = code
	return resp
}
