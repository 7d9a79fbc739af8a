package group

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pystream/pystream/topic"
)

// Defaults of ConsumerConfig: Kafka's group.consumer.session.timeout.ms
// and group.consumer.heartbeat.interval.ms.
const (
	DefaultSessionTimeout    = 45 * time.Second
	DefaultHeartbeatInterval = 5 * time.Second
	// consumerMemberPrefix starts the member ids the coordinator gives
	// (newMemberID): "member-" and a random UUID.
	consumerMemberPrefix = "member"
)

// ConsumerConfig configures a ConsumerCoordinator. The zero value is
// usable: Kafka's defaults, a registry of its own, no topic known, no
// metrics.
type ConsumerConfig struct {
	// SessionTimeout is how long a member may go without a heartbeat
	// before it is removed and its partitions move.
	SessionTimeout time.Duration
	// HeartbeatInterval is how often members heartbeat; it also caps how
	// long a heartbeat may wait for a change (Heartbeat.MaxWait).
	HeartbeatInterval time.Duration
	// Registry keeps each group to one protocol; share it with the
	// classic coordinator.
	Registry *Registry
	// Topics returns the partition count of each of names the cluster
	// has; a name it lacks (no such topic) is left out. It is called
	// without the coordinator's lock held, at every heartbeat, with the
	// topics of the heartbeat's group.
	Topics func(names []string) map[string]int32
	// Metrics receives each group's members, epoch and rebalances (the
	// series both coordinators share); nil records nothing.
	Metrics *Metrics
	// MaxGroups bounds the groups the coordinator keeps
	// (DefaultMaxGroups).
	MaxGroups int
	// Save, when set, writes a group's leases (EncodeLeases) durably
	// where the next coordinator reads them back (Restore); nil leases
	// remove the group's. It is called with the coordinator's lock held:
	// when a member joins or leaves, when one is to be answered a
	// partition its saved lease lacks, and when a member's deadline
	// passes its saved lease end (leaseHeadroom). A heartbeat whose save
	// fails is not answered (ErrNotSaved). Nil saves nothing.
	Save func(group string, leases []byte) error
	// Logger receives the saves that failed where no heartbeat waited
	// on them; nil logs nothing.
	Logger *slog.Logger
}

// Heartbeat is one member's heartbeat, Kafka's ConsumerGroupHeartbeat:
// MemberEpoch 0 joins (the coordinator picks a member id unless MemberID
// names one, which then joins again in a new incarnation), -1 leaves, any
// other value must be the member's current epoch.
type Heartbeat struct {
	MemberID    string
	MemberEpoch int32
	// Topics is the subscription: required to join; nil afterwards
	// leaves it unchanged.
	Topics []string
	// Owned is every partition the member holds now: those it was
	// assigned and has not released. A partition left out is released:
	// the coordinator may give it to another member. On a join (epoch 0)
	// it is what the member held before it was forgotten (a server
	// restart, a new coordinator): the member keeps each such partition
	// of its subscription that no other member holds.
	Owned []TopicPartitions
	// ClientID and ClientHost describe the member (Describe shows them).
	ClientID, ClientHost string
	// MaxWait lets the heartbeat wait, up to the heartbeat interval, for
	// a change of the member's assignment before it is answered, so that
	// a member learns of a rebalance at once rather than at its next
	// heartbeat. Zero answers at once.
	MaxWait time.Duration
}

// Assignment is a heartbeat's answer.
type Assignment struct {
	MemberID    string
	MemberEpoch int32
	// Partitions is what the member may hold now. A partition it holds
	// and that is not here must be released: commit its progress, stop
	// reading it, and leave it out of Owned.
	Partitions        []TopicPartitions
	HeartbeatInterval time.Duration
	// SessionTimeout is how long the coordinator keeps the member
	// without a heartbeat: a member that has had no answer for that long
	// must stop reading its partitions, which may be another's by then.
	SessionTimeout time.Duration
}

// ConsumerCoordinator is the coordinator of consumer groups: the model of
// Kafka's consumer protocol (KIP-848) over HTTP. Members heartbeat; the
// coordinator assigns partitions itself (Assign) and moves a partition
// only after its previous owner released it or timed out, so that no
// partition is ever held by two members. Every group's state is soft, in
// memory. A ConsumerCoordinator is safe for concurrent use.
//
// Epochs: the group epoch goes up with every change of membership,
// subscriptions or partition counts; a member's epoch is the group epoch
// at which its assignment last changed, and each answer carries it. A
// heartbeat or commit must send the member's current epoch: an older one
// is ErrFencedMemberEpoch.
//
// Restarts: membership is soft state, so a coordinator that starts (a
// server restart, a new coordinator in cluster mode) knows no member,
// while the members of the one before may still be reading. Each group's
// leases — member ids, epochs, holdings and lease ends — are saved
// durably (ConsumerConfig.Save) and read back when a coordinator starts
// (Restore): a partition whose saved owner's lease has not ended goes to
// no one else until it ends, and everything else is assigned at once.
// Members that join again claim what they held (Heartbeat.Owned on a
// join) and keep it unless another member holds it. Where the saved
// leases cannot be had yet, Withhold hands out no unclaimed partition
// for a session timeout, as
// docs/groups.md § Restarts and a new coordinator
// tells.
//
// Timeouts: a member whose session ran out is removed by the next call
// that touches its group (a heartbeat of any member, a commit check, a
// listing), and by a sweep every session timeout, so that a group whose
// members all went away without a word is forgotten even if nothing
// touches it again. Waiting heartbeats wake up at the earliest session
// end of their group, so a live member learns of a dead one's partitions
// within its own heartbeat interval. The sweep is one goroutine, running
// while the coordinator has groups; Close stops it.
type ConsumerCoordinator struct {
	cfg      ConsumerConfig
	registry *Registry

	// mu guards groups, closed, quit and every group and member in
	// them.
	mu     sync.Mutex
	groups map[string]*consumerGroup
	closed bool
	// quit is non-nil while the sweep goroutine runs: closing it ends
	// the sweep. swept counts the sweep goroutine.
	quit  chan struct{}
	swept sync.WaitGroup
	// withheld is when Withhold's window ends: until then a partition
	// no member claims is assigned to no one.
	withheld time.Time
	// restored is what the coordinator before saved of each group, as
	// far as it may still hold (Restore).
	restored map[string]*restoredGroup
	// ticket counts the calls of Withhold and Clear: a Restore given an
	// older ticket is ignored.
	ticket uint64
}

var _ Lister = (*ConsumerCoordinator)(nil)

// NewConsumerCoordinator returns a coordinator with no groups.
func NewConsumerCoordinator(cfg ConsumerConfig) *ConsumerCoordinator {
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.Registry == nil {
		cfg.Registry = NewRegistry()
	}
	if cfg.Topics == nil {
		cfg.Topics = func([]string) map[string]int32 { return nil }
	}
	if cfg.MaxGroups <= 0 {
		cfg.MaxGroups = DefaultMaxGroups
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &ConsumerCoordinator{cfg: cfg, registry: cfg.Registry, groups: map[string]*consumerGroup{}}
}

// Close forgets every group (waiting heartbeats end with
// ErrUnknownMember) and stops the sweep. Heartbeats afterwards are
// ErrClosed.
func (c *ConsumerCoordinator) Close() {
	c.mu.Lock()
	c.closed = true
	c.clearLocked()
	c.mu.Unlock()
	c.swept.Wait()
}

// Withhold starts a window of d in which a partition that no member of
// a group holds or claims is assigned to no one: the server calls it when
// this coordinator starts after another one may have had members and
// their saved leases cannot be read yet (a coordinator move in cluster
// mode, before this node's copy of the store is known to be current),
// with the session timeout, after which every member of the earlier
// coordinator has stopped reading (or joined here again, claiming what it
// holds). Nothing is saved during the window, so as not to overwrite
// what the coordinator before saved; Restore ends it. Waiting heartbeats
// are answered when the window ends. The ticket it returns is Restore's.
func (c *ConsumerCoordinator) Withhold(d time.Duration) (ticket uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.withheld = time.Now().Add(d)
	c.ticket++
	return c.ticket
}

// withholdingLocked reports whether Withhold's window is open at now.
// Lock should be held.
func (c *ConsumerCoordinator) withholdingLocked(now time.Time) bool {
	return now.Before(c.withheld)
}

// startSweepLocked starts the sweep unless it runs: the coordinator
// started a group. Lock should be held.
func (c *ConsumerCoordinator) startSweepLocked() {
	if c.quit != nil {
		return
	}
	c.quit = make(chan struct{})
	c.swept.Add(1)
	go c.sweep(c.quit)
}

// stopSweepLocked ends the sweep once the coordinator has no group left.
// Lock should be held.
func (c *ConsumerCoordinator) stopSweepLocked() {
	if c.quit != nil && len(c.groups) == 0 {
		close(c.quit)
		c.quit = nil
	}
}

// sweep expires every group's members once per session timeout until
// quit is closed.
func (c *ConsumerCoordinator) sweep(quit <-chan struct{}) {
	defer c.swept.Done()
	t := time.NewTicker(c.cfg.SessionTimeout)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		c.mu.Lock()
		c.expireAllLocked()
		c.mu.Unlock()
	}
}

// Heartbeat handles one member's heartbeat for group: it joins, leaves,
// or reports what the member holds, and answers what it may hold now. A
// group id that ValidateID refuses wraps topic.ErrInvalidName; a
// heartbeat breaking the protocol wraps ErrInvalidHeartbeat; a group
// whose members speak the classic protocol is *ProtocolMismatchError; a
// stale epoch or unknown member is *MemberError.
//
// With hb.MaxWait set, a heartbeat that changes nothing for its member
// waits up to min(MaxWait, heartbeat interval) for a change of its
// assignment (a rebalance, a partition released to it) and answers then:
// a long poll. A heartbeat that joins or leaves, or whose answer differs
// from the member's last one, is answered at once; so is one whose ctx
// ends.
func (c *ConsumerCoordinator) Heartbeat(ctx context.Context, group string, hb Heartbeat) (Assignment, error) {
	if err := ValidateID(group); err != nil {
		return Assignment{}, err
	}
	if err := checkHeartbeat(hb); err != nil {
		return Assignment{}, err
	}
	hb.ClientID = ClipClientID(hb.ClientID)
	counts := c.lookup(group, hb.Topics)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Assignment{}, fmt.Errorf("group %q: %w", group, ErrClosed)
	}
	now := time.Now()
	g := c.groups[group]
	if g != nil {
		c.expireLocked(g, now)
		g = c.groups[group]
	}
	var m *consumerMember
	var err error
	switch hb.MemberEpoch {
	case -1:
		return c.leaveLocked(g, group, hb.MemberID)
	case 0:
		if g, m, err = c.joinLocked(g, group, hb, counts, now); err != nil {
			return Assignment{}, err
		}
	default:
		// The member is checked before anything it sent is used: a
		// heartbeat of no member changes no group.
		if m, err = memberOf(g, group, hb.MemberID); err != nil {
			return Assignment{}, err
		}
		if hb.MemberEpoch != m.epoch {
			return Assignment{}, &MemberError{Group: group, MemberID: m.id, Epoch: hb.MemberEpoch, Current: m.epoch, Err: ErrFencedMemberEpoch}
		}
		c.updateLocked(g, m, hb, counts, now)
	}
	changed := c.reconcileLocked(g, m, now)
	if hb.MemberEpoch != 0 && !changed && hb.MaxWait > 0 {
		if err := c.waitLocked(ctx, g, m, min(hb.MaxWait, c.cfg.HeartbeatInterval)); err != nil {
			return Assignment{}, err
		}
	}
	// The leases are durable before the member learns of what they
	// cover: a coordinator that starts after a crash withholds it.
	if err := c.saveLocked(g, time.Now()); err != nil {
		return Assignment{}, err
	}
	return c.answer(m), nil
}

// answer is m's heartbeat answer.
func (c *ConsumerCoordinator) answer(m *consumerMember) Assignment {
	return Assignment{MemberID: m.id, MemberEpoch: m.epoch, Partitions: m.assigned.list(),
		HeartbeatInterval: c.cfg.HeartbeatInterval, SessionTimeout: c.cfg.SessionTimeout}
}

// checkHeartbeat checks what a heartbeat says on its own.
func checkHeartbeat(hb Heartbeat) error {
	switch {
	case hb.MemberEpoch < -1:
		return invalid("member epoch %d: 0 joins, -1 leaves, else the epoch of the last answer", hb.MemberEpoch)
	case hb.MemberEpoch != 0 && hb.MemberID == "":
		return invalid("member epoch %d needs the member id the join answered", hb.MemberEpoch)
	case hb.MemberEpoch == 0 && len(hb.Topics) == 0:
		return invalid("a join (member epoch 0) needs the topics to subscribe to")
	case hb.Topics != nil && len(hb.Topics) == 0:
		return invalid("topics, when given, names at least one topic")
	}
	if hb.MemberID != "" {
		if err := topic.ValidateName(hb.MemberID); err != nil {
			return fmt.Errorf("group: member id: %w", err)
		}
	}
	for _, t := range hb.Topics {
		if err := topic.ValidateName(t); err != nil {
			return fmt.Errorf("group: subscribed topic: %w", err)
		}
	}
	for _, tp := range hb.Owned {
		if err := topic.ValidateName(tp.Topic); err != nil {
			return fmt.Errorf("group: owned topic: %w", err)
		}
		for _, p := range tp.Partitions {
			if p < 0 {
				return invalid("owned partition %d of %s: partitions count from 0", p, tp.Topic)
			}
		}
	}
	return nil
}

// lookup asks the cluster for the partition counts of the group's topics
// and of subscription, without holding the lock: the cluster may take a
// while to answer about a topic it does not know.
func (c *ConsumerCoordinator) lookup(group string, subscription []string) map[string]int32 {
	names := map[string]bool{}
	for _, t := range subscription {
		names[t] = true
	}
	c.mu.Lock()
	if g := c.groups[group]; g != nil {
		for _, m := range g.members {
			for _, t := range m.topics {
				names[t] = true
			}
		}
	}
	c.mu.Unlock()
	list := sortedKeys(names)
	found := c.cfg.Topics(list)
	out := make(map[string]int32, len(list))
	for _, t := range list {
		out[t] = found[t] // 0 for a topic the cluster does not have
	}
	return out
}

// waitLocked waits, releasing the lock, until m's assignment changes, d
// has passed or ctx ends. It wakes at every change of the group and at
// the earliest session end of another member, to expire it. The lock is
// held again when it returns; a member removed meanwhile (the group was
// cleared, the member joined again) is *MemberError. When ctx ends (the
// client went away) it returns ctx's error and changes nothing of m: an
// answer nobody reads must not move the member's epoch, or its next
// heartbeat would be fenced.
func (c *ConsumerCoordinator) waitLocked(ctx context.Context, g *consumerGroup, m *consumerMember, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		changed := g.changed
		var expiry <-chan time.Time
		stopExpiry := func() bool { return false }
		next, ok := g.nextExpiry(m)
		if release, found := c.nextReleaseLocked(g.id, time.Now()); found && (!ok || release.Before(next)) {
			next, ok = release, true // what was withheld may be handed out then
		}
		if ok {
			t := time.NewTimer(max(time.Until(next), 0))
			expiry, stopExpiry = t.C, t.Stop
		}
		c.mu.Unlock()
		done := false
		select {
		case <-changed:
		case <-expiry:
		case <-timer.C:
			done = true
		case <-ctx.Done():
		}
		stopExpiry()
		c.mu.Lock()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("group %q: member %q: heartbeat: %w", g.id, m.id, err)
		}
		if c.groups[g.id] != g || g.members[m.id] != m {
			return &MemberError{Group: g.id, MemberID: m.id, Epoch: m.epoch, Err: ErrUnknownMember}
		}
		now := time.Now()
		m.deadline = now.Add(c.cfg.SessionTimeout)
		c.expireLocked(g, now)
		if c.reconcileLocked(g, m, now) || done {
			return nil
		}
	}
}
