package group

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"
)

// Bounds and defaults of the classic coordinator: Kafka's broker
// defaults, except the initial rebalance delay.
const (
	// DefaultMinSessionTimeout is the shortest session timeout a member
	// may ask for (Kafka's group.min.session.timeout.ms).
	DefaultMinSessionTimeout = 6 * time.Second
	// DefaultMaxSessionTimeout is the longest (Kafka's
	// group.max.session.timeout.ms).
	DefaultMaxSessionTimeout = 30 * time.Minute
	// NewMemberJoinTimeout is how long a new member's first join may
	// wait for its rebalance to complete before the member is dropped
	// (Kafka's fixed 5 minutes): a new member has no id to heartbeat
	// with yet.
	NewMemberJoinTimeout = 5 * time.Minute
)

// ClassicConfig is the classic coordinator's configuration; the zero
// value of every field takes the default its comment names.
type ClassicConfig struct {
	// InitialDelay is Kafka's group.initial.rebalance.delay.ms: how long
	// a new group's first rebalance waits for more members (extended by
	// each new one, up to the rebalance timeout). Zero completes it as
	// soon as the members that asked have joined. Kafka's default is
	// 3 s; PyStream's is zero (the server's PYSTREAM_GROUP_INITIAL_DELAY
	// says why).
	InitialDelay time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound the session timeout
	// a member asks for (DefaultMinSessionTimeout,
	// DefaultMaxSessionTimeout); outside them a join is refused with
	// ErrInvalidSessionTimeout.
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// MaxMembers bounds a group's members (MaxMembers).
	MaxMembers int
	// MaxGroups bounds the groups the coordinator keeps, those with
	// only member ids given out included (DefaultMaxGroups).
	MaxGroups int
	// Metrics receives the per-group series; nil records nothing.
	Metrics *Metrics
	// Logger receives a line per rebalance and per member removed by a
	// timeout; nil discards them.
	Logger *slog.Logger
}

func (c ClassicConfig) withDefaults() ClassicConfig {
	if c.InitialDelay < 0 {
		c.InitialDelay = 0
	}
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = DefaultMinSessionTimeout
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = DefaultMaxSessionTimeout
	}
	if c.MaxMembers <= 0 {
		c.MaxMembers = MaxMembers
	}
	if c.MaxGroups <= 0 {
		c.MaxGroups = DefaultMaxGroups
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// ClassicCoordinator is the coordinator of Kafka's classic group protocol: it keeps
// every classic group's members, generation and state in memory (soft
// state: after a restart members join again) and answers JoinGroup,
// SyncGroup, Heartbeat and LeaveGroup, and the membership checks of
// OffsetCommit, as Kafka's group coordinator does.
//
// A group goes through Kafka's states. Empty: no members. A join makes
// it PreparingRebalance, where every known member must join again (the
// others learn it from their heartbeats, answered
// ErrRebalanceInProgress) until the rebalance timeout — the longest any
// member asked for — removes those that did not. The join then completes:
// the generation grows by one, the protocol every member supports is
// chosen by vote (selectProtocol), and each join is answered, the
// leader's with every member's metadata. CompletingRebalance waits for
// the leader's SyncGroup, whose assignment is relayed to every member
// (followers' SyncGroups wait for it); the group is then Stable. The
// coordinator never assigns: eager and cooperative clients both work.
// A member whose heartbeats stop for its session timeout is removed
// and the group rebalances.
//
// Static members (a group instance id, KIP-345) keep their place across
// restarts: a static member joining without its member id takes over its
// instance's place under a new member id, fencing the old one
// (ErrFencedInstance), and in a Stable group that costs no rebalance
// unless it changes the protocol the group would choose.
//
// The first member of a group claims it in the Registry, and the group
// is released when its last member goes: a group never has members of
// both protocols.
//
// Time is the real clock: sessions and timeouts are timers (one per
// group), so tests run it inside testing/synctest. A ClassicCoordinator
// is safe for concurrent use; Join and Sync block their caller until
// the rebalance answers them or their context ends.
type ClassicCoordinator struct {
	cfg ClassicConfig
	reg *Registry

	// mu guards groups, closed, and every classicGroup and classicMember
	// they hold. Lock order: ClassicCoordinator.mu, then Registry.mu.
	mu     sync.Mutex
	groups map[string]*classicGroup
	closed bool
}

// NewClassicCoordinator returns a classic coordinator claiming its groups in reg.
func NewClassicCoordinator(reg *Registry, cfg ClassicConfig) *ClassicCoordinator {
	return &ClassicCoordinator{cfg: cfg.withDefaults(), reg: reg, groups: map[string]*classicGroup{}}
}

// Registry is the registry the coordinator claims its groups in, which
// a deletion of a group's offsets holds (Registry.Hold).
func (c *ClassicCoordinator) Registry() *Registry { return c.reg }

// Close stops every group's timers and answers every waiting join and
// sync with ErrClosed. The coordinator answers nothing afterwards.
func (c *ClassicCoordinator) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, g := range c.groups {
		if g.timer != nil {
			g.timer.Stop()
		}
		for _, m := range g.members {
			m.answerJoin(joinAnswer{err: ErrClosed})
			m.answerSync(syncAnswer{err: ErrClosed})
		}
	}
}

// Clear forgets every group, as when this server stops (or starts)
// being the coordinator: waiting joins and syncs are answered
// ErrNotCoordinator, every group is released in the Registry and its
// series removed, and members that heartbeat here again are unknown.
func (c *ClassicCoordinator) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, g := range c.groups {
		if g.timer != nil {
			g.timer.Stop()
		}
		g.commits.drain()
		for _, m := range g.members {
			m.answerJoin(joinAnswer{err: ErrNotCoordinator})
			m.answerSync(syncAnswer{err: ErrNotCoordinator})
		}
		if len(g.members) > 0 {
			c.reg.Release(id, Classic)
		}
		c.cfg.Metrics.Forget(id, Classic)
		delete(c.groups, id)
	}
}

// ProtocolMetadata is one assignment protocol a member supports (range,
// cooperative-sticky, ...) and its metadata: opaque to the coordinator,
// the consumer protocol's subscription for consumers.
type ProtocolMetadata struct {
	Name     string
	Metadata []byte
}

// MemberRef names a member in a request: its member id, and its group
// instance id when it is static ("" otherwise).
type MemberRef struct {
	MemberID, InstanceID string
}

// newMemberID is a new member's id, as Kafka makes it: the group
// instance id of a static member, else the client id, then '-' and a
// random UUID.
func newMemberID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return prefix + "-" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
