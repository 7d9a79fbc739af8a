package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/group"
)

// leaveGroup answers LeaveGroup (key 13) v0-v5: members leave and the
// group rebalances for those who stay (group.ClassicCoordinator.Leave).
// v0-v2 name one member, whose error is the answer's; v3+ name a batch,
// each answered on its own, and a static member may be named by its
// group instance id alone (an operator removing it).
func (s *Server) leaveGroup(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	refs := []group.MemberRef{{MemberID: req.MemberID}}
	if req.Version >= 3 {
		refs = refs[:0]
		for _, m := range req.Members {
			refs = append(refs, group.MemberRef{MemberID: m.MemberID, InstanceID: deref(m.InstanceID)})
		}
	}
	errs, err := s.groups.Leave(req.Group, refs)
	if err != nil {
		return failLeaveGroup(req, x.code(groupErrorCode(err)))
	}
	if req.Version < 3 {
		resp.ErrorCode = x.code(groupErrorCode(errs[0]))
		return resp
	}
	for i, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, x.code(groupErrorCode(errs[i]))
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

func failLeaveGroup(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	resp.ErrorCode = code
	for _, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, code
		resp.Members = append(resp.Members, rm)
	}
	return resp
}
