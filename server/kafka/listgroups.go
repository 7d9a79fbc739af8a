package kafka

import (
	"cmp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/group"
)

// listGroups answers ListGroups (key 16) v0-v5: every group, of either
// protocol, ascending by id. Groups with members come from the
// coordinators; every other consumer id that committed offsets is a
// group too (Kafka lists a group that only stores offsets), Empty, of
// protocol type "" and type classic. v4+ filters by state, v5+ by type
// ("classic" for Kafka's protocol, "consumer" for the HTTP API's),
// both ignoring case. As a Kafka broker lists the groups it coordinates,
// one broker lists every group and the others answer an empty list
// (listsGroups), so that a client asking every broker (kadm, sarama,
// librdkafka) sees each group once.
func (s *Server) listGroups(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	if !s.listsGroups(x.broker) {
		return resp
	}
	type listed struct {
		group.Summary
		protocolType string
	}
	var all []listed
	seen := map[string]bool{}
	for _, g := range s.groups.List() {
		d, _ := s.groups.Describe(g.Group)
		all = append(all, listed{g, d.ProtocolType})
		seen[g.Group] = true
	}
	if s.others != nil {
		for _, g := range s.others.List() {
			if !seen[g.Group] {
				all = append(all, listed{g, "consumer"})
				seen[g.Group] = true
			}
		}
	}
	committed, err := s.c.ListAllOffsets()
	if err != nil {
		s.cfg.Logger.Warn("kafka ListGroups: the committed offsets could not all be read; groups without members may be missing", "err", err)
	}
	for _, o := range committed {
		if !seen[o.ConsumerID] {
			all = append(all, listed{group.Summary{Group: o.ConsumerID, Protocol: group.Classic, State: group.StateEmpty}, ""})
			seen[o.ConsumerID] = true
		}
	}
	slices.SortFunc(all, func(a, b listed) int { return cmp.Compare(a.Group, b.Group) })
	for _, g := range all {
		if !matchesAny(req.StatesFilter, g.State) || !matchesAny(req.TypesFilter, string(g.Protocol)) {
			continue
		}
		rg := kmsg.NewListGroupsResponseGroup()
		rg.Group, rg.ProtocolType, rg.GroupState, rg.GroupType = g.Group, g.protocolType, g.State, string(g.Protocol)
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// listsGroups reports whether broker's listener answers ListGroups with
// the groups, and ListTransactions with the transactions. In a cluster of
// processes it is the coordinator's (coordinatorCode). In the embedded
// cluster every broker coordinates every group and transaction, and only
// one lists them: the lowest-numbered available broker, the one Metadata
// names the controller.
func (s *Server) listsGroups(broker int) bool {
	if s.dir != nil {
		return s.coordinatorCode() == 0
	}
	lowest := 0
	for _, b := range s.c.Brokers() {
		if b.Available && (lowest == 0 || b.ID < lowest) {
			lowest = b.ID
		}
	}
	return broker == lowest
}

// matchesAny reports whether v is one of filter, ignoring case; an empty
// filter matches everything.
func matchesAny(filter []string, v string) bool {
	if len(filter) == 0 {
		return true
	}
	return slices.ContainsFunc(filter, func(f string) bool { return strings.EqualFold(f, v) })
}

func failListGroups(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.ListGroupsRequest).ResponseKind().(*kmsg.ListGroupsResponse)
	resp.ErrorCode = code
	return resp
}
