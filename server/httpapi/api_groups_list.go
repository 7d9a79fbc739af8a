package httpapi

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
func (a *API) handleListGroups(w http.ResponseWriter, r *http.Request) {
	if ae := a.notCoordinator(); ae != nil {
		writeAPIError(w, ae)
		return
	}
	byID := map[string]apiclient.GroupSummary{}
	for _, l := range a.groupListers() {
		for _, g := range l.List() {
			byID[g.Group] = apiclient.GroupSummary{Group: g.Group, Protocol: string(g.Protocol), State: g.State, Members: g.Members}
		}
	}
	offsets, err := a.data.ListAllOffsets()
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
func (a *API) describeGroup(g string) (group.Description, bool) {
	for _, l := range a.groupListers() {
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
func (a *API) handleDescribeGroup(w http.ResponseWriter, r *http.Request) {
	g, ae := a.groupParam(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	d, found := a.describeGroup(g)
	committed, err := a.data.ListOffsets(g)
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
		hw, err := a.data.HighWatermark(k.topic, k.p)
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
func (a *API) handleDeleteGroup(w http.ResponseWriter, r *http.Request) {
	g, ae := a.groupParam(r)
	if ae == nil {
		ae = a.noBody(w, r)
	}
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	release, err := a.groups.Registry.Hold(g)
	defer release()
	if errors.Is(err, group.ErrDeleting) {
		writeAPIError(w, classify(err))
		return
	}
	if err != nil {
		p, _ := a.groups.Registry.Protocol(g)
		n := 0
		if d, ok := a.describeGroup(g); ok {
			n = len(d.Members)
		}
		writeAPIError(w, newAPIError(http.StatusConflict, CodeConflict,
			"group %q has %d %s member(s); a group is deleted once its members have left", g, n, protocolWords(p)))
		return
	}
	n, err := a.data.DeleteOffsets(g)
	if errors.Is(err, client.ErrDeleteUnfinished) {
		// The offsets are gone; a directory no reader sees is left,
		// removed at the next delete.
		a.logger.Warn("group deleted, a directory of its offsets is left", "group", g, "err", err)
		err = nil
	}
	if err != nil {
		writeAPIError(w, a.opError("delete group", err))
		return
	}
	if n == 0 {
		writeAPIError(w, notFound("group %q has no committed offsets and no members", g))
		return
	}
	a.logger.Info("group deleted", "group", g, "offsets", n)
	writeJSON(w, http.StatusOK, apiclient.DeleteGroupResponse{Group: g, OffsetsDeleted: n})
}
