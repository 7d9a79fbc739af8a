package group

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// This file holds a consumer group's state and the steps that change it.
// Every function here runs with ConsumerCoordinator.mu held.

// consumerGroup is one consumer group with members.
type consumerGroup struct {
	id string
	// epoch is the group epoch: up by one at every change of members,
	// subscriptions or partition counts.
	epoch   int32
	members map[string]*consumerMember
	// target is the assignor's output at epoch, by member id.
	target map[string][]TopicPartitions
	// partitions are the partition counts the target was computed from,
	// by topic (0: no such topic): the topics the members subscribe to,
	// and no other.
	partitions map[string]int32
	// changed is closed, and replaced, whenever a member's assignment or
	// holdings change: waiting heartbeats (waitLocked) look again.
	changed chan struct{}
	// commits keeps commits apart from the changes that fence them.
	commits *gate
	// saved is the leases last saved (ConsumerConfig.Save), by member
	// id; nil before the first save.
	saved map[string]savedLease
}

// consumerMember is one member of a consumer group.
type consumerMember struct {
	id string
	// epoch is the group epoch at which assigned last changed.
	epoch int32
	// topics is the subscription, ascending.
	topics []string
	// assigned is what the last answer gave the member.
	assigned partSet
	// owned is what the member last said it holds, limited to what it
	// was given: a member cannot claim a partition it was never assigned.
	owned partSet
	// deadline is when its session ends without another heartbeat.
	deadline             time.Time
	clientID, clientHost string
}

// tp is one partition of one topic.
type tp struct {
	topic string
	p     int32
}

// partSet is a set of partitions.
type partSet map[tp]bool

// setOf builds the set of list.
func setOf(list []TopicPartitions) partSet {
	s := partSet{}
	for _, t := range list {
		for _, p := range t.Partitions {
			s[tp{t.Topic, p}] = true
		}
	}
	return s
}

// list is s by topic, ascending, partitions ascending; nil when empty.
func (s partSet) list() []TopicPartitions {
	by := map[string][]int32{}
	for k := range s {
		by[k.topic] = append(by[k.topic], k.p)
	}
	var out []TopicPartitions
	for _, t := range sortedKeys(by) {
		ps := by[t]
		slices.Sort(ps)
		out = append(out, TopicPartitions{Topic: t, Partitions: ps})
	}
	return out
}

// holds reports whether m holds k: assigned to it, or still owned by it
// (assigned before, not released yet).
func (m *consumerMember) holds(k tp) bool { return m.assigned[k] || m.owned[k] }

// signal follows every change of a member's epoch, assignment or
// holdings, and of the members: it fences the commits checked before the
// change (they land before anyone is answered) and wakes the heartbeats
// waiting on g.
func (g *consumerGroup) signal() {
	g.commits.drain()
	close(g.changed)
	g.changed = make(chan struct{})
}

// nextExpiry is the earliest session end of g's members other than m.
func (g *consumerGroup) nextExpiry(m *consumerMember) (time.Time, bool) {
	var next time.Time
	found := false
	for _, o := range g.members {
		if o != m && (!found || o.deadline.Before(next)) {
			next, found = o.deadline, true
		}
	}
	return next, found
}

// memberOf returns the member id of g, or *MemberError with
// ErrUnknownMember.
func memberOf(g *consumerGroup, group, id string) (*consumerMember, error) {
	if g != nil {
		if m, ok := g.members[id]; ok {
			return m, nil
		}
	}
	return nil, &MemberError{Group: group, MemberID: id, Err: ErrUnknownMember}
}

// joinLocked admits a member: a new one, or a new incarnation of member
// hb.MemberID, which gives up whatever the old one held. The first member
// claims the group in the registry.
func (c *ConsumerCoordinator) joinLocked(g *consumerGroup, group string, hb Heartbeat, counts map[string]int32, now time.Time) (*consumerGroup, *consumerMember, error) {
	if g == nil {
		if len(c.groups) >= c.cfg.MaxGroups {
			return nil, nil, fmt.Errorf("group %q: the coordinator keeps %d groups: %w", group, c.cfg.MaxGroups, ErrTooManyGroups)
		}
		if err := c.registry.Claim(group, Consumer); err != nil {
			return nil, nil, err
		}
		g = &consumerGroup{id: group, members: map[string]*consumerMember{}, target: map[string][]TopicPartitions{},
			partitions: map[string]int32{}, changed: make(chan struct{}), commits: newGate(),
			epoch: c.restoredEpochLocked(group)}
		c.groups[group] = g
		c.startSweepLocked()
	}
	id := hb.MemberID
	if id == "" {
		id = newMemberID(consumerMemberPrefix)
	}
	if _, again := g.members[id]; !again && len(g.members) >= MaxMembers {
		return nil, nil, &MemberError{Group: group, MemberID: id, Err: ErrGroupFull}
	}
	m := &consumerMember{id: id, topics: sortedUnique(hb.Topics), assigned: partSet{}, owned: partSet{},
		deadline: now.Add(c.cfg.SessionTimeout), clientID: hb.ClientID, clientHost: hb.ClientHost}
	delete(g.members, id) // an earlier incarnation holds nothing now
	c.restoredJoinLocked(group, id)
	m.owned = claims(g, m.topics, hb.Owned, counts)
	g.members[id] = m
	c.retargetLocked(g, counts, true)
	m.epoch = g.epoch
	return g, m, nil
}

// claims is what a joining member keeps of the partitions it says it
// holds (owned): those of a topic it subscribes to, that the topic has
// (counts), and that no member of g holds.
func claims(g *consumerGroup, topics []string, owned []TopicPartitions, counts map[string]int32) partSet {
	out := partSet{}
	for k := range setOf(owned) {
		if !slices.Contains(topics, k.topic) || k.p >= counts[k.topic] {
			continue
		}
		held := false
		for _, o := range g.members {
			if o.holds(k) {
				held = true
				break
			}
		}
		if !held {
			out[k] = true
		}
	}
	return out
}

// leaveLocked removes member id of g at its own request. Leaving is its
// promise that it released everything: its partitions are free at once.
func (c *ConsumerCoordinator) leaveLocked(g *consumerGroup, group, id string) (Assignment, error) {
	if _, err := memberOf(g, group, id); err != nil {
		return Assignment{}, err
	}
	c.removeMembersLocked(g, id)
	return Assignment{MemberID: id, MemberEpoch: -1, HeartbeatInterval: c.cfg.HeartbeatInterval}, nil
}

// updateLocked applies a heartbeat of member m at its current epoch: its
// holdings, its subscription, its session, and the partition counts
// looked up for it (a topic created or deleted).
func (c *ConsumerCoordinator) updateLocked(g *consumerGroup, m *consumerMember, hb Heartbeat, counts map[string]int32, now time.Time) {
	m.deadline = now.Add(c.cfg.SessionTimeout)
	owned := partSet{}
	for k := range setOf(hb.Owned) {
		if m.holds(k) {
			owned[k] = true
		}
	}
	if !maps.Equal(owned, m.owned) {
		m.owned = owned
		g.signal() // what it released may go to a waiting member
	}
	subscribed := false
	if hb.Topics != nil {
		if topics := sortedUnique(hb.Topics); !slices.Equal(topics, m.topics) {
			m.topics = topics
			subscribed = true
		}
	}
	c.retargetLocked(g, counts, subscribed)
}

// retargetLocked runs the assignor over g's members and the partition
// count of every topic they subscribe to: counts where it has the topic,
// else the count g had. g.partitions is rebuilt from the members'
// subscriptions, so it never holds a topic no member asks for. The group
// epoch goes up when the target changes, or always with force (members
// or subscriptions changed); without force and with no count changed,
// nothing is computed.
func (c *ConsumerCoordinator) retargetLocked(g *consumerGroup, counts map[string]int32, force bool) {
	partitions := map[string]int32{}
	for _, m := range g.members {
		for _, t := range m.topics {
			n, ok := counts[t]
			if !ok {
				n = g.partitions[t]
			}
			partitions[t] = n
		}
	}
	if !force && maps.Equal(partitions, g.partitions) {
		return
	}
	g.partitions = partitions
	// Each member's share of the previous target, corrected by what the
	// members say they hold: a partition one holds is its own, whatever
	// the target said (a member that joined again claiming it, or one
	// that has not released it yet), so that the assignor keeps it there
	// where balance allows.
	holder := map[tp]string{}
	for _, m := range g.members {
		for k := range m.owned {
			holder[k] = m.id
		}
	}
	ms := make([]AssignMember, 0, len(g.members))
	for _, m := range g.members {
		current := partSet{}
		for k := range setOf(g.target[m.id]) {
			if h, ok := holder[k]; !ok || h == m.id {
				current[k] = true
			}
		}
		maps.Copy(current, m.owned)
		ms = append(ms, AssignMember{ID: m.id, Topics: m.topics, Current: current.list()})
	}
	target := Assign(ms, g.partitions)
	if !force && equalTargets(target, g.target) {
		return
	}
	g.target = target
	g.epoch++
	g.signal()
	c.cfg.Metrics.Rebalance(g.id, Consumer)
	c.cfg.Metrics.Generation(g.id, Consumer, g.epoch)
	c.cfg.Metrics.Members(g.id, Consumer, len(g.members))
}

// equalTargets compares two targets.
func equalTargets(a, b map[string][]TopicPartitions) bool {
	return maps.EqualFunc(a, b, func(x, y []TopicPartitions) bool {
		return slices.EqualFunc(x, y, func(p, q TopicPartitions) bool {
			return p.Topic == q.Topic && slices.Equal(p.Partitions, q.Partitions)
		})
	})
}

// reconcileLocked moves m towards its target: it is assigned its target's
// partitions that no other member holds, and nothing else. A partition
// another member still holds comes once that member released it or was
// removed ("revoke, then assign"). A partition that is withheld (the
// window of Withhold, or a restored lease of a member of the coordinator
// before) comes only after it is released, unless m holds it already. It
// reports whether m's assignment changed; if so m's epoch becomes the
// group epoch.
func (c *ConsumerCoordinator) reconcileLocked(g *consumerGroup, m *consumerMember, now time.Time) bool {
	next := partSet{}
	for k := range setOf(g.target[m.id]) {
		free := m.holds(k) || !c.withheldLocked(g.id, k, now)
		for _, o := range g.members {
			if !free {
				break
			}
			free = o == m || !o.holds(k)
		}
		if free {
			next[k] = true
		}
	}
	if maps.Equal(next, m.assigned) {
		return false
	}
	m.assigned = next
	m.epoch = g.epoch
	g.signal()
	return true
}

// expireLocked removes g's members whose session ended by now.
func (c *ConsumerCoordinator) expireLocked(g *consumerGroup, now time.Time) {
	var gone []string
	for id, m := range g.members {
		if !now.Before(m.deadline) {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		c.removeMembersLocked(g, gone...)
	}
}

// removeMembersLocked removes members of g: their partitions are free. A
// group left without members is removed and released in the registry.
func (c *ConsumerCoordinator) removeMembersLocked(g *consumerGroup, ids ...string) {
	for _, id := range ids {
		delete(g.members, id)
		delete(g.target, id)
	}
	if len(g.members) == 0 {
		c.saveOrLogLocked(g, time.Now())
		c.removeGroupLocked(g)
		return
	}
	c.retargetLocked(g, nil, true)
	c.saveOrLogLocked(g, time.Now())
}

// removeGroupLocked forgets g and frees its id for either protocol.
func (c *ConsumerCoordinator) removeGroupLocked(g *consumerGroup) {
	delete(c.groups, g.id)
	c.stopSweepLocked()
	c.registry.Release(g.id, Consumer)
	g.signal()
	c.cfg.Metrics.Forget(g.id, Consumer)
}
