package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/group"
)

// joinGroup answers JoinGroup (key 11) v0-v9: a member joins the group's
// next generation (group.ClassicCoordinator.Join). The answer waits for
// the rebalance to complete, up to the longest rebalance timeout of the
// group's members, on this connection: requests a client sends after it
// on the same connection wait too, as they do on a Kafka broker. A client
// that closes the connection ends the wait (conn.watchGone). v0 has
// no rebalance timeout (the session timeout is used); v4+ gives a new
// member its id with MEMBER_ID_REQUIRED; v5+ carries the group instance
// id of a static member; v9's SkipAssignment tells a restarted static
// leader not to assign.
func (s *Server) joinGroup(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.JoinGroupRequest)
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.MemberID = req.MemberID
	rebalance := req.RebalanceTimeoutMillis
	if req.Version == 0 {
		rebalance = req.SessionTimeoutMillis
	}
	jr := group.JoinRequest{Group: req.Group, MemberID: req.MemberID, InstanceID: deref(req.InstanceID),
		ClientID: x.clientIDString(), ClientHost: x.clientHost(),
		SessionTimeout:   time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		RebalanceTimeout: time.Duration(rebalance) * time.Millisecond,
		ProtocolType:     req.ProtocolType, RequireKnownMemberID: req.Version >= 4, SkipAssignmentSupported: req.Version >= 9}
	for _, p := range req.Protocols {
		jr.Protocols = append(jr.Protocols, group.ProtocolMetadata{Name: p.Name, Metadata: p.Metadata})
	}
	res, err := s.groups.Join(x.ctx, jr)
	if err != nil {
		x.noteRefusal(req.Group, err)
		resp.ErrorCode = x.code(groupErrorCode(err))
		if res.MemberID != "" {
			resp.MemberID = res.MemberID // MEMBER_ID_REQUIRED
		}
		return resp
	}
	resp.MemberID, resp.Generation, resp.LeaderID, resp.SkipAssignment = res.MemberID, res.Generation, res.LeaderID, res.SkipAssignment
	resp.ProtocolType, resp.Protocol = kmsg.StringPtr(res.ProtocolType), kmsg.StringPtr(res.Protocol)
	for _, m := range res.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ProtocolMetadata = m.MemberID, nonEmpty(m.InstanceID), m.Metadata
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

func failJoinGroup(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.JoinGroupRequest)
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode, resp.MemberID = code, req.MemberID
	return resp
}
