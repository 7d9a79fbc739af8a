package httpapi

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
func (a *API) explorerGroups(committed []apiclient.ConsumerPosition, hw map[partKey]uint64) []apiclient.GroupDescription {
	out := []apiclient.GroupDescription{}
	if _, here := a.groups.Home.GroupCoordinator(); !here {
		return out
	}
	byGroup := map[string][]groupOffset{}
	for _, c := range committed {
		byGroup[c.ConsumerID] = append(byGroup[c.ConsumerID], groupOffset{partKey{c.Topic, c.Partition}, c.Offset})
	}
	hwOf := func(k partKey) (uint64, bool) { h, ok := hw[k]; return h, ok }
	seen := map[string]bool{}
	for _, l := range a.groupListers() {
		for _, sum := range l.List() {
			if seen[sum.Group] {
				continue
			}
			d, ok := l.Describe(sum.Group)
			if !ok {
				continue // its last member left since List
			}
			seen[sum.Group] = true
			out = append(out, describeGroupFor(sum.Group, d, true, byGroup[sum.Group], hwOf))
		}
	}
	slices.SortFunc(out, func(a, b apiclient.GroupDescription) int { return cmp.Compare(a.Group, b.Group) })
	return out
}

// groupOffset is one offset a group committed.
type groupOffset struct {
	key    partKey
	offset uint64
}

// describeGroupFor is group g in GET /api/groups/{group}'s shape: d when
// found (a group with members), else an Empty group; its members and,
// per partition it committed or is assigned, the committed offset, the
// high watermark hw gives (null when the partition is gone, ok false)
// and the lag. GET /api/groups/{group} and the explorer both build it
// here.
func describeGroupFor(g string, d group.Description, found bool, committed []groupOffset, hw func(partKey) (uint64, bool)) apiclient.GroupDescription {
	out := apiclient.GroupDescription{Group: g, State: group.StateEmpty, Members: []apiclient.GroupMember{}, Offsets: []apiclient.GroupPartitionOffset{}}
	if found {
		out.Protocol, out.State, out.ProtocolType, out.Assignor, out.Epoch = string(d.Protocol), d.State, d.ProtocolType, d.Assignor, d.Generation
	}
	rows := map[partKey]*apiclient.GroupPartitionOffset{}
	row := func(k partKey) *apiclient.GroupPartitionOffset {
		if rows[k] == nil {
			rows[k] = &apiclient.GroupPartitionOffset{Topic: k.topic, Partition: k.p}
		}
		return rows[k]
	}
	for _, m := range d.Members {
		out.Members = append(out.Members, apiclient.GroupMember{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			ClientHost: m.ClientHost, Assignment: toWire(m.Assigned)})
		for _, tp := range m.Assigned {
			for _, p := range tp.Partitions {
				row(partKey{tp.Topic, int(p)}).MemberID = m.ID
			}
		}
	}
	for _, c := range committed {
		off := c.offset
		row(c.key).CommittedOffset = &off
	}
	for _, k := range slices.SortedFunc(maps.Keys(rows), func(a, b partKey) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.p, b.p))
	}) {
		r := rows[k]
		if h, ok := hw(k); ok {
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
