package group

import (
	"context"
	"fmt"
	"time"
)

// SyncRequest is a SyncGroup: a member of the generation asking for its
// assignment, the leader bringing everyone's.
type SyncRequest struct {
	Group string
	MemberRef
	Generation int32
	// ProtocolType and Protocol, when not "" (SyncGroup v5+), must be
	// the group's.
	ProtocolType, Protocol string
	// Assignments is the leader's assignment by member id; a follower's
	// is ignored.
	Assignments map[string][]byte
}

// SyncResult is a member's assignment.
type SyncResult struct {
	ProtocolType, Protocol string
	Assignment             []byte
}

// Sync answers a SyncGroup. In CompletingRebalance a follower's sync
// waits for the leader's, whose assignment is relayed to every member
// (a member it leaves out gets an empty one) and makes the group Stable;
// in a Stable group a sync is answered at once with the member's
// assignment. When ctx ends first it returns ErrClosed.
func (c *ClassicCoordinator) Sync(ctx context.Context, req SyncRequest) (SyncResult, error) {
	if err := ValidateID(req.Group); err != nil {
		return SyncResult{}, err
	}
	assignments := make(map[string][]byte, len(req.Assignments))
	for id, a := range req.Assignments {
		assignments[id] = append([]byte{}, a...)
	}
	req.Assignments = assignments
	c.mu.Lock()
	res, wait, err := c.syncLocked(req, time.Now())
	c.mu.Unlock()
	if err != nil || wait == nil {
		return res, err
	}
	select {
	case a := <-wait:
		return a.res, a.err
	case <-ctx.Done():
		return SyncResult{}, fmt.Errorf("group %q: sync: %w", req.Group, ErrClosed)
	}
}

// syncLocked checks and records a sync; a non-nil channel carries the
// answer once the leader's sync gives it. Lock should be held.
func (c *ClassicCoordinator) syncLocked(req SyncRequest, now time.Time) (SyncResult, chan syncAnswer, error) {
	if c.closed {
		return SyncResult{}, nil, ErrClosed
	}
	g := c.groups[req.Group]
	if g == nil {
		return SyncResult{}, nil, fmt.Errorf("group %q has no members: member %q: %w", req.Group, req.MemberID, ErrUnknownMember)
	}
	defer c.settleLocked(g)
	if err := g.checkMember(req.MemberRef); err != nil {
		return SyncResult{}, nil, err
	}
	if req.Generation != g.generation {
		return SyncResult{}, nil, fmt.Errorf("group %q: generation %d, not %d: %w", g.id, req.Generation, g.generation, ErrIllegalGeneration)
	}
	if req.ProtocolType != "" && req.ProtocolType != g.protocolType || req.Protocol != "" && req.Protocol != g.protocol {
		return SyncResult{}, nil, fmt.Errorf("group %q: protocol %s/%s, not %s/%s: %w", g.id, req.ProtocolType, req.Protocol,
			g.protocolType, g.protocol, ErrInconsistentProtocol)
	}
	m := g.members[req.MemberID]
	switch g.state {
	case StatePreparingRebalance:
		return SyncResult{}, nil, fmt.Errorf("group %q: %w", g.id, ErrRebalanceInProgress)
	case StateCompletingRebalance:
		m.answerSync(syncAnswer{err: ErrRebalanceInProgress}) // replaced by this one
		m.sync = make(chan syncAnswer, 1)
		ch := m.sync
		delete(g.pendingSync, m.id)
		if m.id == g.leader {
			for id, mm := range g.members {
				mm.assignment = req.Assignments[id]
				if mm.assignment == nil {
					mm.assignment = []byte{}
				}
			}
			g.state = StateStable
			for _, mm := range g.members {
				if mm.sync != nil {
					mm.answerSync(syncAnswer{res: SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: mm.assignment}})
					mm.deadline = now.Add(mm.sessionTimeout)
				}
			}
		}
		return SyncResult{}, ch, nil
	default: // Stable
		delete(g.pendingSync, m.id)
		m.deadline = now.Add(m.sessionTimeout)
		return SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment}, nil, nil
	}
}
