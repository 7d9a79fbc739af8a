package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/server/group"
)

// deleteGroups answers DeleteGroups (key 42) v0-v2: each group's
// committed offsets are deleted, durably and all or nothing, as DELETE
// /api/groups/{group} deletes them (a group without members is nothing
// but its offsets in PyStream). Group by group: a group with members of
// either protocol is NON_EMPTY_GROUP, one with nothing to delete
// GROUP_ID_NOT_FOUND, an invalid id INVALID_GROUP_ID. The group is held
// in the registry while its offsets go (group.Registry.Hold): a member
// that would join it meanwhile is refused, so that none starts from, or
// commits to, offsets being deleted. In a cluster of processes only the
// group coordinator deletes (NOT_COORDINATOR elsewhere).
func (s *Server) deleteGroups(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		rg.ErrorCode = x.code(s.deleteGroup(x, id))
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// deleteGroup deletes one group's offsets and returns its error code.
func (s *Server) deleteGroup(x *exchange, id string) int16 {
	if group.ValidateID(id) != nil {
		return kerr.InvalidGroupID.Code
	}
	release, err := s.groups.Registry().Hold(id)
	defer release()
	switch {
	case errors.Is(err, group.ErrManaged):
		return kerr.NonEmptyGroup.Code
	case err != nil:
		return groupErrorCode(err)
	}
	n, err := s.c.DeleteOffsets(id)
	if errors.Is(err, client.ErrDeleteUnfinished) {
		// The offsets are gone; a directory no reader sees is left,
		// removed at the next delete.
		s.cfg.Logger.Warn("kafka DeleteGroups: group deleted, a directory of its offsets is left", "group", id, "err", err)
		err = nil
	}
	if err != nil {
		x.fault("group", id, "err", err)
		return offsetCode(err)
	}
	if n == 0 {
		return kerr.GroupIDNotFound.Code
	}
	s.cfg.Logger.Info("kafka group deleted", "group", id, "offsets", n)
	return 0
}

func failDeleteGroups(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group, rg.ErrorCode = id, code
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}
