package group

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// CheckCommit decides whether member memberID of group, at epoch, may
// commit an offset of topic/partition: it must be a member (else
// *MemberError with ErrUnknownMember), at its current epoch
// (ErrFencedMemberEpoch) and hold the partition, assigned or not yet
// released (ErrNotOwned). A commit does not count as a heartbeat.
//
// When it may, the caller writes the offset and then calls done: until
// then the group's fences wait (gate), so that the member's commit lands
// before a change that would refuse it — a new epoch, the partition
// released, the member removed — is answered to anyone. done is a no-op
// after a refusal.
func (c *ConsumerCoordinator) CheckCommit(group, memberID string, epoch int32, topicName string, partition int32) (done func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[group]
	if g != nil {
		c.expireLocked(g, time.Now())
		g = c.groups[group]
	}
	m, err := memberOf(g, group, memberID)
	if err != nil {
		return noCommit, err
	}
	if epoch != m.epoch {
		return noCommit, &MemberError{Group: group, MemberID: memberID, Epoch: epoch, Current: m.epoch, Err: ErrFencedMemberEpoch}
	}
	if !m.holds(tp{topicName, partition}) {
		return noCommit, &MemberError{Group: group, MemberID: memberID, Epoch: epoch, Topic: topicName, Partition: partition, Err: ErrNotOwned}
	}
	return g.commits.enter(), nil
}

// List is every consumer group with members, ascending by id (Lister).
func (c *ConsumerCoordinator) List() []Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireAllLocked()
	out := make([]Summary, 0, len(c.groups))
	for _, id := range sortedKeys(c.groups) {
		g := c.groups[id]
		out = append(out, Summary{Group: id, Protocol: Consumer, State: g.state(), Members: len(g.members)})
	}
	return out
}

// Describe is one consumer group: its state, epoch and members with
// their assignments (Lister). ok is false when it has no members.
func (c *ConsumerCoordinator) Describe(group string) (Description, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[group]
	if g == nil {
		return Description{}, false
	}
	c.expireLocked(g, time.Now())
	if c.groups[group] != g {
		return Description{}, false
	}
	d := Description{Group: group, Protocol: Consumer, State: g.state(), ProtocolType: "consumer",
		Assignor: AssignorName, Generation: g.epoch}
	for _, m := range g.members {
		d.Members = append(d.Members, Member{ID: m.id, ClientID: m.clientID, ClientHost: m.clientHost, Assigned: m.assigned.list(), Topics: append([]string{}, m.topics...)})
	}
	slices.SortFunc(d.Members, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return d, true
}

// state is g's state in the consumer protocol's words: Stable once every
// member holds exactly its target, Reconciling while partitions move.
func (g *consumerGroup) state() string {
	for _, m := range g.members {
		target := setOf(g.target[m.id])
		if !maps.Equal(target, m.assigned) || !maps.Equal(m.assigned, m.owned) {
			return StateReconciling
		}
	}
	return StateStable
}

// Clear forgets every group, as when this server stops being the
// coordinator: their members, told they are unknown here, join again
// where the coordinator is now. Waiting heartbeats end with
// ErrUnknownMember.
func (c *ConsumerCoordinator) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
}

// clearLocked forgets every group. Lock should be held.
func (c *ConsumerCoordinator) clearLocked() {
	for _, g := range c.groups {
		c.removeGroupLocked(g)
	}
	c.restored = nil
	c.ticket++
}

// expireAllLocked expires the members of every group.
func (c *ConsumerCoordinator) expireAllLocked() {
	now := time.Now()
	for _, g := range c.groups {
		c.expireLocked(g, now)
	}
}
