package server

import (
	"cmp"
	"maps"
	"slices"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/group"
)

// The explorer's consumer groups: every group with members, of either
// protocol, as GET /api/groups/{group} describes it, built from the
// coordinators' listings (group.Lister), the committed offsets the
// explorer already listed and the high watermarks of the state it is
// drawing — so that one poll reads no more than it did without groups.

// partKey names one partition.
type partKey struct {
	topic string
	p     int
}

// explorerGroups describes every group with members: from the
// coordinators' listings, with committed taken from the consumers'
// committed offsets (a group commits as the consumer of its id) and hw
// the high watermark of each partition. In cluster mode a node that does
// not coordinate groups lists none (its members joined the controller).
func (s *Server) explorerGroups(committed []apiclient.ConsumerPosition, hw map[partKey]uint64) []apiclient.GroupDescription {
	out := []apiclient.GroupDescription{}
	if _, here := s.groupCoordinator(); !here {
		return out
	}
	byGroup := map[string][]apiclient.ConsumerPosition{}
	for _, c := range committed {
		byGroup[c.ConsumerID] = append(byGroup[c.ConsumerID], c)
	}
	seen := map[string]bool{}
	for _, l := range s.groupListers() {
		for _, sum := range l.List() {
			if seen[sum.Group] {
				continue
			}
			d, ok := l.Describe(sum.Group)
			if !ok {
				continue // its last member left since List
			}
			seen[sum.Group] = true
			out = append(out, describeGroupFor(d, byGroup[sum.Group], hw))
		}
	}
	slices.SortFunc(out, func(a, b apiclient.GroupDescription) int { return cmp.Compare(a.Group, b.Group) })
	return out
}

// describeGroupFor is d in GET /api/groups/{group}'s shape: its members
// and, per partition it committed or is assigned, the committed offset,
// the high watermark (hw; null when the partition is gone) and the lag.
func describeGroupFor(d group.Description, committed []apiclient.ConsumerPosition, hw map[partKey]uint64) apiclient.GroupDescription {
	out := apiclient.GroupDescription{Group: d.Group, Protocol: string(d.Protocol), State: d.State, ProtocolType: d.ProtocolType,
		Assignor: d.Assignor, Epoch: d.Generation, Members: []apiclient.GroupMember{}, Offsets: []apiclient.GroupPartitionOffset{}}
	rows := map[partKey]*apiclient.GroupPartitionOffset{}
	row := func(topic string, p int) *apiclient.GroupPartitionOffset {
		k := partKey{topic, p}
		if rows[k] == nil {
			rows[k] = &apiclient.GroupPartitionOffset{Topic: topic, Partition: p}
		}
		return rows[k]
	}
	for _, m := range d.Members {
		out.Members = append(out.Members, apiclient.GroupMember{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			ClientHost: m.ClientHost, Assignment: toWire(m.Assigned)})
		for _, tp := range m.Assigned {
			for _, p := range tp.Partitions {
				row(tp.Topic, int(p)).MemberID = m.ID
			}
		}
	}
	for _, c := range committed {
		off := c.Offset
		row(c.Topic, c.Partition).CommittedOffset = &off
	}
	for _, k := range slices.SortedFunc(maps.Keys(rows), func(a, b partKey) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.p, b.p))
	}) {
		r := rows[k]
		if h, ok := hw[k]; ok {
			r.LogEndOffset = &h
			if r.CommittedOffset != nil {
				lag := h - min(h, *r.CommittedOffset)
				r.Lag = &lag
			}
		}
		out.Offsets = append(out.Offsets, *r)
	}
	return out
}
