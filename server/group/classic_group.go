package group

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// classicGroup is one classic group's soft state. Every field is
// guarded by ClassicCoordinator.mu.
type classicGroup struct {
	id    string
	state string
	// generation grows by one at every completed join; 0 for a group
	// that never completed one.
	generation int32
	// protocolType is the type its first member joined with
	// ("consumer"); protocol the protocol chosen at the last completed
	// join ("" while Empty).
	protocolType, protocol string
	// leader is the member whose SyncGroup carries the assignment.
	leader string
	// members by member id; static maps a group instance id to its
	// member's id.
	members map[string]*classicMember
	static  map[string]string
	// pending are member ids given out with ErrMemberIDRequired and
	// not yet joined with, and when they expire (their session timeout).
	pending map[string]time.Time
	// pendingSync are the members of the generation that have not sent
	// their SyncGroup yet; syncDeadline is when those left are removed.
	pendingSync  map[string]bool
	syncDeadline time.Time
	// joinDeadline is when PreparingRebalance completes whoever joined.
	// initial is set for a new group's first rebalance while
	// ClassicConfig.InitialDelay applies: joinDeadline then moves on by
	// the delay (never past delayLeft in all) each time newMemberAdded.
	joinDeadline   time.Time
	initial        bool
	delayLeft      time.Duration
	newMemberAdded bool
	// timer fires at the group's next deadline (nextDeadline).
	timer *time.Timer
	// joins numbers the members in their order of arrival.
	joins uint64
	// commits keeps commits apart from the changes that fence them: a
	// new generation, a member removed, a static member replaced.
	commits *gate
}

// classicMember is one member of a classic group. Every field is guarded
// by ClassicCoordinator.mu.
type classicMember struct {
	id, instanceID       string
	clientID, clientHost string
	sessionTimeout       time.Duration
	rebalanceTimeout     time.Duration
	protocols            []ProtocolMetadata
	// assignment is the leader's assignment for this member in the
	// current generation; nil until the leader synced.
	assignment []byte
	// isNew is set until the member's first join completes: it has no
	// session yet and expires at deadline whatever it waits for.
	isNew bool
	// deadline is when the member's session expires unless it
	// heartbeats (or joins, or syncs) first; a member waiting in a join
	// or a sync is alive whatever the deadline says.
	deadline time.Time
	// join and sync carry the answer to the member's waiting JoinGroup
	// and SyncGroup; nil when none waits. Each is buffered (one answer).
	join chan joinAnswer
	sync chan syncAnswer
	// order is the member's rank of arrival in the group.
	order uint64
}

// joinAnswer and syncAnswer are the answers a waiting join and sync get.
type joinAnswer struct {
	res JoinResult
	err error
}

type syncAnswer struct {
	res SyncResult
	err error
}

// answerJoin sends a to the member's waiting join, if any.
func (m *classicMember) answerJoin(a joinAnswer) {
	if m.join != nil {
		m.join <- a
		m.join = nil
	}
}

// answerSync sends a to the member's waiting sync, if any.
func (m *classicMember) answerSync(a syncAnswer) {
	if m.sync != nil {
		m.sync <- a
		m.sync = nil
	}
}

// expired reports whether the member's session is over at now: a new
// member's at its deadline whatever it waits for, another's at its
// deadline unless it waits in a join or a sync (Kafka's
// hasSatisfiedHeartbeat).
func (m *classicMember) expired(now time.Time) bool {
	if now.Before(m.deadline) {
		return false
	}
	return m.isNew || (m.join == nil && m.sync == nil)
}

func newClassicGroup(id string) *classicGroup {
	return &classicGroup{id: id, state: StateEmpty, members: map[string]*classicMember{}, static: map[string]string{},
		pending: map[string]time.Time{}, pendingSync: map[string]bool{}, commits: newGate()}
}

// ordered is the group's members in their order of arrival.
func (g *classicGroup) ordered() []*classicMember {
	out := make([]*classicMember, 0, len(g.members))
	for _, m := range g.members {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *classicMember) int { return cmp.Compare(a.order, b.order) })
	return out
}

// prefs is every member's protocols, in the members' order of arrival.
func (g *classicGroup) prefs() [][]ProtocolMetadata {
	ms := g.ordered()
	out := make([][]ProtocolMetadata, len(ms))
	for i, m := range ms {
		out[i] = m.protocols
	}
	return out
}

// joined is every member's metadata for the group's protocol: what the
// leader's join answer carries.
func (g *classicGroup) joined() []JoinedMember {
	var out []JoinedMember
	for _, m := range g.ordered() {
		out = append(out, JoinedMember{MemberID: m.id, InstanceID: m.instanceID, Metadata: metadataFor(m.protocols, g.protocol)})
	}
	return out
}

// rebalanceTimeout is the longest rebalance timeout a member asked for.
func (g *classicGroup) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// allJoined reports whether every member waits in a join and no member
// id given out is still expected (Kafka's hasAllMembersJoined).
func (g *classicGroup) allJoined() bool {
	if len(g.pending) > 0 {
		return false
	}
	for _, m := range g.members {
		if m.join == nil {
			return false
		}
	}
	return true
}

// firstJoined is the earliest member waiting in a join; "" when none.
func (g *classicGroup) firstJoined() string {
	for _, m := range g.ordered() {
		if m.join != nil {
			return m.id
		}
	}
	return ""
}

// checkMember is the check of every request that names a member: a
// group instance id must belong to the member id named with it (else it
// is fenced: another member id took the instance since), and the member
// id must be the group's (Kafka's validateCurrentMember).
func (g *classicGroup) checkMember(ref MemberRef) error {
	if ref.InstanceID != "" {
		current, ok := g.static[ref.InstanceID]
		if !ok {
			return fmt.Errorf("group %q: instance %q: %w", g.id, ref.InstanceID, ErrUnknownMember)
		}
		if current != ref.MemberID {
			return fmt.Errorf("group %q: instance %q is member %q now, not %q: %w", g.id, ref.InstanceID, current, ref.MemberID, ErrFencedInstance)
		}
	}
	if _, ok := g.members[ref.MemberID]; !ok {
		return fmt.Errorf("group %q: member %q: %w", g.id, ref.MemberID, ErrUnknownMember)
	}
	return nil
}

// nextDeadline is the earliest moment something of the group times out;
// zero when nothing can.
func (g *classicGroup) nextDeadline() time.Time {
	var next time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, d := range g.pending {
		earliest(d)
	}
	for _, m := range g.members {
		if m.isNew || (m.join == nil && m.sync == nil) {
			earliest(m.deadline)
		}
	}
	if g.state == StatePreparingRebalance {
		earliest(g.joinDeadline)
	}
	if len(g.pendingSync) > 0 && (g.state == StateCompletingRebalance || g.state == StateStable) {
		earliest(g.syncDeadline)
	}
	return next
}
