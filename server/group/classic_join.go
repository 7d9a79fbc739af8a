package group

import (
	"context"
	"fmt"
	"time"

	"github.com/pystream/pystream/topic"
)

// JoinRequest is a JoinGroup: a member asking to be part of the group's
// next generation.
type JoinRequest struct {
	Group string
	// MemberID is "" on a member's first join; the coordinator gives it
	// one.
	MemberID string
	// InstanceID is a static member's group instance id; "" for a
	// dynamic member.
	InstanceID string
	// ClientID and ClientHost are what DescribeGroups shows of the
	// member.
	ClientID, ClientHost string
	// SessionTimeout is how long the member may go without a heartbeat;
	// RebalanceTimeout how long it may take to join again once a
	// rebalance starts (SessionTimeout when zero).
	SessionTimeout, RebalanceTimeout time.Duration
	// ProtocolType is the kind of group ("consumer"), and Protocols the
	// assignment protocols the member supports, preferred first.
	ProtocolType string
	Protocols    []ProtocolMetadata
	// RequireKnownMemberID is set by JoinGroup v4+ (KIP-394): a new
	// dynamic member is answered ErrMemberIDRequired with its member id
	// and joins again with it.
	RequireKnownMemberID bool
	// SkipAssignmentSupported is set by JoinGroup v9+ (KIP-814): the
	// answer may tell a restarted static leader not to assign.
	SkipAssignmentSupported bool
}

// JoinResult is the answer to a join.
type JoinResult struct {
	// MemberID is the member's id; set with ErrMemberIDRequired too.
	MemberID   string
	Generation int32
	// ProtocolType and Protocol are the group's type and the protocol
	// its members agreed on.
	ProtocolType, Protocol string
	// LeaderID is the leader's member id; the leader's answer carries
	// Members, every member's metadata for Protocol, and computes the
	// assignment unless SkipAssignment.
	LeaderID       string
	SkipAssignment bool
	Members        []JoinedMember
}

// JoinedMember is one member in the leader's join answer.
type JoinedMember struct {
	MemberID, InstanceID string
	Metadata             []byte
}

// Join answers a JoinGroup. It returns once the group's join completes
// (every member joined again, or the rebalance timeout passed), or at
// once when the member is refused, is given its member id
// (ErrMemberIDRequired), or rejoins a settled group with nothing changed.
// When ctx ends first it returns ErrClosed, and the member stays in the
// rebalance as Kafka keeps a join whose connection went away.
//
// A group whose members speak the other protocol refuses the join with
// *ProtocolMismatchError.
func (c *ClassicCoordinator) Join(ctx context.Context, req JoinRequest) (JoinResult, error) {
	if err := checkIDs(req.Group, req.InstanceID); err != nil {
		return JoinResult{Generation: -1}, err
	}
	if err := checkSessionTimeout(req.SessionTimeout, c.cfg.MinSessionTimeout, c.cfg.MaxSessionTimeout); err != nil {
		return JoinResult{Generation: -1}, fmt.Errorf("group %q: %w", req.Group, err)
	}
	if req.RebalanceTimeout <= 0 {
		req.RebalanceTimeout = req.SessionTimeout
	}
	// A rebalance waits for the longest rebalance timeout of the group's
	// members: one member must not hold every other's join for longer
	// than the longest session the coordinator grants.
	req.RebalanceTimeout = min(req.RebalanceTimeout, c.cfg.MaxSessionTimeout)
	req.ClientID = ClipClientID(req.ClientID)
	req.Protocols = copyProtocols(req.Protocols)
	c.mu.Lock()
	res, wait, err := c.joinLocked(req, time.Now())
	c.mu.Unlock()
	if err != nil {
		if res.MemberID == "" {
			res.Generation = -1
		}
		return res, err
	}
	if wait == nil {
		return res, nil
	}
	select {
	case a := <-wait:
		return a.res, a.err
	case <-ctx.Done():
		return JoinResult{Generation: -1}, fmt.Errorf("group %q: join: %w", req.Group, ErrClosed)
	}
}

// joinLocked admits or refuses a join; a non-nil channel carries the
// answer once the rebalance gives it. Lock should be held.
func (c *ClassicCoordinator) joinLocked(req JoinRequest, now time.Time) (JoinResult, chan joinAnswer, error) {
	if c.closed {
		return JoinResult{}, nil, ErrClosed
	}
	g := c.groups[req.Group]
	if g == nil {
		if req.MemberID != "" {
			return JoinResult{}, nil, fmt.Errorf("group %q has no members: member %q: %w", req.Group, req.MemberID, ErrUnknownMember)
		}
		if p, ok := c.reg.Protocol(req.Group); ok && p != Classic {
			return JoinResult{}, nil, &ProtocolMismatchError{Group: req.Group, Has: p, Want: Classic}
		}
		if len(c.groups) >= c.cfg.MaxGroups {
			return JoinResult{}, nil, fmt.Errorf("group %q: the coordinator keeps %d groups: %w", req.Group, c.cfg.MaxGroups, ErrTooManyGroups)
		}
		g = newClassicGroup(req.Group)
		c.groups[req.Group] = g
	}
	defer c.settleLocked(g)
	if !joinable(g.protocolType, g.prefs(), req.ProtocolType, req.Protocols) {
		return JoinResult{}, nil, fmt.Errorf("group %q (type %q): protocol type %q with %d protocols: %w",
			req.Group, g.protocolType, req.ProtocolType, len(req.Protocols), ErrInconsistentProtocol)
	}
	if _, ok := g.pending[req.MemberID]; ok && req.MemberID != "" && req.InstanceID == "" {
		// The second join of a member given its id (KIP-394).
		delete(g.pending, req.MemberID)
		ch, err := c.addMemberLocked(g, req.MemberID, req, now)
		return JoinResult{}, ch, err
	}
	if req.MemberID == "" {
		prefix := req.ClientID
		if req.InstanceID != "" {
			prefix = req.InstanceID
		}
		id := newMemberID(prefix)
		if old, ok := g.static[req.InstanceID]; ok && req.InstanceID != "" {
			res, ch := c.replaceStaticLocked(g, old, id, req, now)
			return res, ch, nil
		}
		if len(g.members)+len(g.pending) >= c.cfg.MaxMembers {
			return JoinResult{}, nil, fmt.Errorf("group %q: %d members: %w", req.Group, c.cfg.MaxMembers, ErrGroupFull)
		}
		if req.InstanceID == "" && req.RequireKnownMemberID {
			g.pending[id] = now.Add(req.SessionTimeout)
			return JoinResult{MemberID: id, Generation: -1}, nil, fmt.Errorf("group %q: %w", req.Group, ErrMemberIDRequired)
		}
		ch, err := c.addMemberLocked(g, id, req, now)
		return JoinResult{}, ch, err
	}
	ref := MemberRef{MemberID: req.MemberID, InstanceID: req.InstanceID}
	if err := g.checkMember(ref); err != nil {
		return JoinResult{}, nil, err
	}
	m := g.members[req.MemberID]
	same := sameProtocols(m.protocols, req.Protocols)
	switch g.state {
	case StateCompletingRebalance:
		if same {
			// The member missed its join's answer: give it again.
			res := JoinResult{MemberID: m.id, Generation: g.generation, ProtocolType: g.protocolType, Protocol: g.protocol, LeaderID: g.leader}
			if m.id == g.leader {
				res.Members = g.joined()
			}
			return res, nil, nil
		}
		return JoinResult{}, c.updateMemberLocked(g, m, req, now, "member "+m.id+" joined again with other protocols"), nil
	case StateStable:
		if same && m.id != g.leader {
			// A follower with nothing new: the current generation,
			// after which it syncs for its assignment.
			return JoinResult{MemberID: m.id, Generation: g.generation, ProtocolType: g.protocolType, Protocol: g.protocol, LeaderID: g.leader}, nil, nil
		}
		// The leader's join rebalances (it asks when the topics
		// changed), as does a member with other protocols.
		return JoinResult{}, c.updateMemberLocked(g, m, req, now, "member "+m.id+" joined again"), nil
	default: // PreparingRebalance
		return JoinResult{}, c.updateMemberLocked(g, m, req, now, "member "+m.id+" joined again"), nil
	}
}

// checkIDs refuses a group id, or a group instance id, that is not a
// valid consumer id (ValidateID): Kafka gives instance ids the same rule
// as topic names.
func checkIDs(group, instance string) error {
	if err := ValidateID(group); err != nil {
		return err
	}
	if instance != "" {
		if err := topic.ValidateName(instance); err != nil {
			return fmt.Errorf("group %q: instance id %q: %w: %w", group, instance, ErrInvalidGroupID, err)
		}
	}
	return nil
}

// copyProtocols copies ps and their metadata: a request's bytes may
// share its frame's buffer, and the coordinator keeps them.
func copyProtocols(ps []ProtocolMetadata) []ProtocolMetadata {
	out := make([]ProtocolMetadata, len(ps))
	for i, p := range ps {
		out[i] = ProtocolMetadata{Name: p.Name, Metadata: append([]byte(nil), p.Metadata...)}
	}
	return out
}
