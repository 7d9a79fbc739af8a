package server

import (
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/group"
)

// Listing, describing and deleting groups, of either protocol
// (docs/groups.md § Listing, describing, deleting).

// handleListGroups answers GET /api/groups: every group with members, of
// either protocol, and every consumer id with committed offsets and no
// members, state Empty, as Kafka lists groups that only have offsets.
func (s *Server) handleListGroups(w http.ResponseWriter, r *http.Request) {
	if ae := s.notCoordinator(); ae != nil {
		writeAPIError(w, ae)
		return
	}
	byID := map[string]apiclient.GroupSummary{}
	for _, l := range s.groupListers() {
		for _, g := range l.List() {
			byID[g.Group] = apiclient.GroupSummary{Group: g.Group, Protocol: string(g.Protocol), State: g.State, Members: g.Members}
		}
	}
	offsets, err := s.cluster.ListAllOffsets()
	if err != nil && offsets == nil {
		writeAPIError(w, classify(err))
		return
	}
	// Offset files that cannot be read still name their consumer; the
	// metrics report them (pystream_consumer_offset_unreadable_files).
	for _, o := range offsets {
		if _, ok := byID[o.ConsumerID]; !ok {
			byID[o.ConsumerID] = apiclient.GroupSummary{Group: o.ConsumerID, State: group.StateEmpty}
		}
	}
	out := apiclient.GroupsResponse{Groups: make([]apiclient.GroupSummary, 0, len(byID))}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out.Groups = append(out.Groups, byID[id])
	}
	writeJSON(w, http.StatusOK, out)
}

// describeGroup is the group's members (from whichever coordinator has
// them), ok false when neither has any.
func (s *Server) describeGroup(g string) (group.Description, bool) {
	for _, l := range s.groupListers() {
		if d, ok := l.Describe(g); ok {
			return d, true
		}
	}
	return group.Description{}, false
}

// handleDescribeGroup answers GET /api/groups/{group}: state, epoch,
// members and their assignments, and per partition the group committed
// or is assigned: the committed offset, the log end (high watermark) and
// the lag, and the member that holds it. A group with no members and no
// committed offset is 404.
func (s *Server) handleDescribeGroup(w http.ResponseWriter, r *http.Request) {
	g, ae := s.groupParam(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	d, found := s.describeGroup(g)
	committed, err := s.cluster.ListOffsets(g)
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	if !found && len(committed) == 0 {
		writeAPIError(w, notFound("group %q has no members and no committed offsets", g))
		return
	}
	offsets := make([]groupOffset, len(committed))
	for i, o := range committed {
		offsets[i] = groupOffset{partKey{o.Topic, o.Partition}, o.Offset}
	}
	out := describeGroupFor(g, d, found, offsets, func(k partKey) (uint64, bool) {
		hw, err := s.cluster.HighWatermark(k.topic, k.p)
		return hw, err == nil
	})
	writeJSON(w, http.StatusOK, out)
}

// handleDeleteGroup answers DELETE /api/groups/{group}: the group's
// committed offsets are deleted (durably, all or nothing), as Kafka's
// DeleteGroups. A group with members of either protocol is 409; one with
// nothing to delete is 404. The group is held in the registry while its
// offsets go: a member that would join it meanwhile is refused
// (group.ErrDeleting), so that none starts from offsets being deleted.
func (s *Server) handleDeleteGroup(w http.ResponseWriter, r *http.Request) {
	g, ae := s.groupParam(r)
	if ae == nil {
		ae = s.noBody(w, r)
	}
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	release, err := s.groups.Hold(g)
	defer release()
	if errors.Is(err, group.ErrDeleting) {
		writeAPIError(w, classify(err))
		return
	}
	if err != nil {
		p, _ := s.groups.Protocol(g)
		n := 0
		if d, ok := s.describeGroup(g); ok {
			n = len(d.Members)
		}
		writeAPIError(w, newAPIError(http.StatusConflict, CodeConflict,
			"group %q has %d %s member(s); a group is deleted once its members have left", g, n, protocolWords(p)))
		return
	}
	n, err := s.cluster.DeleteOffsets(g)
	if errors.Is(err, client.ErrDeleteUnfinished) {
		// The offsets are gone; a directory no reader sees is left,
		// removed at the next delete.
		s.logger.Warn("group deleted, a directory of its offsets is left", "group", g, "err", err)
		err = nil
	}
	if err != nil {
		writeAPIError(w, s.opError("delete group", err))
		return
	}
	if n == 0 {
		writeAPIError(w, notFound("group %q has no committed offsets and no members", g))
		return
	}
	s.logger.Info("group deleted", "group", g, "offsets", n)
	writeJSON(w, http.StatusOK, apiclient.DeleteGroupResponse{Group: g, OffsetsDeleted: n})
}
