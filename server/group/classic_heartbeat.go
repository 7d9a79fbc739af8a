package group

import (
	"fmt"
	"time"
)

// Heartbeat answers a Heartbeat: it keeps the member's session alive and
// tells it whether to join again. A member of a rebalancing group gets
// ErrRebalanceInProgress (its session is kept alive all the same), one
// with another generation ErrIllegalGeneration, an unknown one
// ErrUnknownMember, a fenced static one ErrFencedInstance.
func (c *ClassicCoordinator) Heartbeat(group string, generation int32, ref MemberRef) error {
	if err := ValidateID(group); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	g := c.groups[group]
	if g == nil {
		return fmt.Errorf("group %q has no members: member %q: %w", group, ref.MemberID, ErrUnknownMember)
	}
	defer c.settleLocked(g)
	if err := g.checkMember(ref); err != nil {
		return err
	}
	if generation != g.generation {
		return fmt.Errorf("group %q: generation %d, not %d: %w", group, generation, g.generation, ErrIllegalGeneration)
	}
	m := g.members[ref.MemberID]
	m.deadline = time.Now().Add(m.sessionTimeout)
	if g.state == StatePreparingRebalance {
		return fmt.Errorf("group %q: %w", group, ErrRebalanceInProgress)
	}
	return nil
}

// Leave answers a LeaveGroup: each member named leaves, and the group
// rebalances for those who stay. A member may be named by its group
// instance id alone (an operator removing a static member). The answer
// has one error per member named, nil for those that left; the error
// returned alone is the group's (an invalid id, a closed coordinator).
func (c *ClassicCoordinator) Leave(group string, members []MemberRef) ([]error, error) {
	if err := ValidateID(group); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	out := make([]error, len(members))
	g := c.groups[group]
	if g == nil {
		for i, ref := range members {
			out[i] = fmt.Errorf("group %q has no members: member %q: %w", group, ref.MemberID, ErrUnknownMember)
		}
		return out, nil
	}
	defer c.settleLocked(g)
	now := time.Now()
	left := 0
	for i, ref := range members {
		switch {
		case ref.MemberID == "":
			// An operator removing a static member by its instance id.
			id, ok := g.static[ref.InstanceID]
			if !ok || ref.InstanceID == "" {
				out[i] = fmt.Errorf("group %q: instance %q: %w", group, ref.InstanceID, ErrUnknownMember)
				continue
			}
			c.removeMemberLocked(g, g.members[id], "left (named by its instance id)")
			left++
		case pendingHas(g, ref.MemberID):
			delete(g.pending, ref.MemberID)
			c.maybeCompleteJoinLocked(g, now)
		default:
			if err := g.checkMember(ref); err != nil {
				out[i] = err
				continue
			}
			c.removeMemberLocked(g, g.members[ref.MemberID], "left")
			left++
		}
	}
	if left > 0 {
		c.afterRemovalLocked(g, now, fmt.Sprintf("%d member(s) left", left))
	}
	return out, nil
}

func pendingHas(g *classicGroup, id string) bool {
	_, ok := g.pending[id]
	return ok
}

// CheckCommit is OffsetCommit's membership check, run before anything
// is stored. A group with classic members takes commits from a member of
// the current generation only: a stale generation is
// ErrIllegalGeneration, an unknown member ErrUnknownMember, a fenced
// static one ErrFencedInstance, and during CompletingRebalance (the
// assignment not known yet) ErrRebalanceInProgress. A commit without
// membership (generation -1, no member id) is Registry.Unmanaged's to
// decide: stored for a group without members of either protocol, and
// refused with ErrManaged otherwise. Naming a member or a generation of
// a group without members is ErrUnknownMember, as Kafka answers it
// (the member joins again). A closed coordinator is ErrClosed.
//
// When the commit may go on, the caller stores its offsets and then
// calls done: until then the group's fences wait (gate), so that a
// member's commit lands before a new generation, its removal or its
// static replacement is answered to anyone. done is a no-op after a
// refusal and for a commit without membership.
func (c *ClassicCoordinator) CheckCommit(group string, generation int32, ref MemberRef) (done func(), err error) {
	if err := ValidateID(group); err != nil {
		return noCommit, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return noCommit, ErrClosed
	}
	g := c.groups[group]
	simple := generation < 0 && ref.MemberID == "" && ref.InstanceID == ""
	if g == nil || len(g.members) == 0 {
		if !simple {
			return noCommit, fmt.Errorf("group %q has no members: member %q, generation %d: %w", group, ref.MemberID, generation, ErrUnknownMember)
		}
		return noCommit, c.reg.Unmanaged(group)
	}
	if simple {
		return noCommit, fmt.Errorf("group %q (%s, %d members): %w", group, Classic, len(g.members), ErrManaged)
	}
	if err := g.checkMember(ref); err != nil {
		return noCommit, err
	}
	if generation != g.generation {
		return noCommit, fmt.Errorf("group %q: generation %d, not %d: %w", group, generation, g.generation, ErrIllegalGeneration)
	}
	if g.state == StateCompletingRebalance {
		return noCommit, fmt.Errorf("group %q: %w", group, ErrRebalanceInProgress)
	}
	return g.commits.enter(), nil
}
