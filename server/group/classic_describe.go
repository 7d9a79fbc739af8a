package group

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var _ Lister = (*ClassicCoordinator)(nil)

// List is every classic group with members, ascending by id.
func (c *ClassicCoordinator) List() []Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Summary
	for _, g := range c.groups {
		if len(g.members) > 0 {
			out = append(out, Summary{Group: g.id, Protocol: Classic, State: g.state, Members: len(g.members)})
		}
	}
	slices.SortFunc(out, func(a, b Summary) int { return cmp.Compare(a.Group, b.Group) })
	return out
}

// Describe is one classic group with members, as Kafka's DescribeGroups
// shows it: its members' metadata, assignments and the protocol they
// agreed on only while it is Stable (during a rebalance they are being
// replaced). The assignment of a "consumer" group is decoded into
// Member.Assigned.
func (c *ClassicCoordinator) Describe(group string) (Description, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[group]
	if g == nil || len(g.members) == 0 {
		return Description{}, false
	}
	d := Description{Group: g.id, Protocol: Classic, State: g.state, ProtocolType: g.protocolType, Generation: g.generation}
	stable := g.state == StateStable
	if stable {
		d.Assignor = g.protocol
	}
	for _, m := range g.ordered() {
		dm := Member{ID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost, Topics: subscribedTopics(m.protocols)}
		if stable {
			dm.Metadata = metadataFor(m.protocols, g.protocol)
			dm.Assignment = m.assignment
			if g.protocolType == "consumer" {
				dm.Assigned = decodeAssignment(m.assignment)
			}
		}
		d.Members = append(d.Members, dm)
	}
	return d, true
}

// subscribedTopics is the topics a classic member subscribes to: every
// topic of its protocols' metadata, decoded as Kafka's consumer protocol
// subscription, ascending; nil when any of them is not that (the member
// may consume anything).
func subscribedTopics(ps []ProtocolMetadata) []string {
	topics := []string{}
	for _, p := range ps {
		var m kmsg.ConsumerMemberMetadata
		if len(p.Metadata) == 0 || m.ReadFrom(p.Metadata) != nil {
			return nil
		}
		topics = append(topics, m.Topics...)
	}
	slices.Sort(topics)
	return slices.Compact(topics)
}

// decodeAssignment reads Kafka's consumer protocol assignment (the
// ConsumerProtocolAssignment every consumer client's leader sends):
// the topics and partitions of one member, ascending. nil when the bytes
// are not that.
func decodeAssignment(b []byte) []TopicPartitions {
	var a kmsg.ConsumerMemberAssignment
	if len(b) == 0 || a.ReadFrom(b) != nil {
		return nil
	}
	var out []TopicPartitions
	for _, t := range a.Topics {
		ps := slices.Clone(t.Partitions)
		slices.Sort(ps)
		out = append(out, TopicPartitions{Topic: t.Topic, Partitions: ps})
	}
	slices.SortFunc(out, func(x, y TopicPartitions) int { return cmp.Compare(x.Topic, y.Topic) })
	return out
}

// Subscription is what a classic group's members consume, as
// HoldSubscription reports it for Kafka's OffsetDelete.
type Subscription struct {
	// ProtocolType is the protocol type the members joined with
	// ("consumer" for consumers).
	ProtocolType string
	// Topics is every topic a member subscribes to, ascending; Known is
	// false when a member's metadata is not Kafka's consumer protocol,
	// which may name any topic.
	Topics []string
	Known  bool
}

// HoldSubscription is the subscription of classic group group while it
// has members (ok false otherwise), held: until done is called the
// group's fences wait, as for a commit (CheckCommit), so that no new
// generation — which might subscribe to other topics — is answered to
// anyone meanwhile. The caller deletes the offsets of topics outside the
// subscription, then calls done.
func (c *ClassicCoordinator) HoldSubscription(group string) (s Subscription, done func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[group]
	if c.closed || g == nil || len(g.members) == 0 {
		return Subscription{}, noCommit, false
	}
	s = Subscription{ProtocolType: g.protocolType, Topics: []string{}, Known: true}
	for _, m := range g.members {
		topics := subscribedTopics(m.protocols)
		if topics == nil {
			s.Known = false
		}
		s.Topics = append(s.Topics, topics...)
	}
	slices.Sort(s.Topics)
	s.Topics = slices.Compact(s.Topics)
	return s, g.commits.enter(), true
}
