package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/group"
)

// describeGroups answers DescribeGroups (key 15) v0-v5: each group's
// state, protocol and members, whichever protocol its members speak
// (the classic coordinator's groups, then Config.OtherGroups'). A group
// without members is Empty when its id committed offsets (a Kafka group
// that only stores offsets) and Dead otherwise, as Kafka answers a group
// it does not know. Members' metadata and assignments are given while
// the group is Stable; an HTTP group's assignment is encoded as Kafka's
// consumer protocol assignment, so that Kafka tools decode it.
func (s *Server) describeGroups(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	coord := s.coordinatorCode()
	for _, id := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group = id
		switch {
		case group.ValidateID(id) != nil:
			rg.ErrorCode = x.code(kerr.InvalidGroupID.Code)
		case coord != 0:
			rg.ErrorCode = x.code(coord)
		default:
			s.describeGroup(&rg, id)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// describeGroup fills rg with group id's description.
func (s *Server) describeGroup(rg *kmsg.DescribeGroupsResponseGroup, id string) {
	d, ok := s.groups.Describe(id)
	if !ok && s.others != nil {
		d, ok = s.others.Describe(id)
	}
	if !ok {
		rg.State = group.StateDead
		if committed, err := s.c.ListOffsets(id); err == nil && len(committed) > 0 {
			rg.State = group.StateEmpty
		}
		return
	}
	rg.State, rg.ProtocolType, rg.Protocol = d.State, d.ProtocolType, d.Assignor
	for _, m := range d.Members {
		rm := kmsg.NewDescribeGroupsResponseGroupMember()
		rm.MemberID, rm.InstanceID, rm.ClientID, rm.ClientHost = m.ID, nonEmpty(m.InstanceID), m.ClientID, m.ClientHost
		rm.ProtocolMetadata, rm.MemberAssignment = m.Metadata, m.Assignment
		if rm.MemberAssignment == nil && d.ProtocolType == "consumer" && len(m.Assigned) > 0 {
			a := kmsg.NewConsumerMemberAssignment()
			for _, tp := range m.Assigned {
				a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: tp.Topic, Partitions: tp.Partitions})
			}
			rm.MemberAssignment = a.AppendTo(nil)
		}
		rg.Members = append(rg.Members, rm)
	}
}

func failDescribeGroups(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.ErrorCode = id, code
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}
