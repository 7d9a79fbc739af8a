package group

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"
)

// This file keeps the consumer groups' leases durable (ConsumerConfig.Save)
// and reads them back when a coordinator starts (Restore), so that after a
// restart or a coordinator move only the partitions a member of the
// coordinator before could still be reading wait, and only until that
// member's lease ends (docs/groups.md § Restarts and a new coordinator).
// Every ...Locked function here runs with ConsumerCoordinator.mu held.

// leaseHeadroom is how far past a member's session deadline its saved
// lease ends: a lease is written again only once the deadline passes what
// was saved, so a group that changes nothing is written about once per
// headroom (a quarter of the session timeout: every 11¼ s with Kafka's
// 45 s), and a coordinator that starts after it withholds a partition at
// most that much longer than its owner could read it.
func (c *ConsumerCoordinator) leaseHeadroom() time.Duration { return c.cfg.SessionTimeout / 4 }

// restoredGroup is what the coordinator before saved of a group, as far
// as it may still hold: the leases of members that have not joined here
// again and whose end has not passed, and the group epoch to count on
// from. all, when set, withholds every partition of the group until then:
// its saved leases could not be read.
type restoredGroup struct {
	epoch  int32
	leases map[string]savedLease
	all    time.Time
}

// savedLease is one member's lease as saved: its partitions, its member
// epoch and its end.
type savedLease struct {
	epoch int32
	parts partSet
	end   time.Time
}

// Restore takes what the coordinator before saved (ConsumerConfig.Save),
// by group, read back from the store: until each member's lease ends, the
// partitions it held go to no one but itself, should it join again; every
// other partition is assigned at once. A group whose leases cannot be read
// (ParseLeases) is withheld whole for a session timeout, and the error is
// returned, joined with those of the stale leases Restore removes (leases
// that all ended). Restore ends the window of Withhold: the server calls
// it once the store is known to hold everything the coordinator before
// saved. after is the ticket of the Withhold that Restore follows (0 when
// none did): when a Clear or another Withhold came since, Restore does
// nothing.
func (c *ConsumerCoordinator) Restore(states map[string][]byte, after uint64) error {
	c.mu.Lock()
	if c.ticket != after || c.closed {
		c.mu.Unlock()
		return nil
	}
	now := time.Now()
	var errs []error
	var stale []string
	c.restored = map[string]*restoredGroup{}
	for id, data := range states {
		l, err := ParseLeases(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("group %q: %w", id, err))
			c.restored[id] = &restoredGroup{all: now.Add(c.cfg.SessionTimeout)}
			continue
		}
		r := &restoredGroup{epoch: l.Epoch, leases: map[string]savedLease{}}
		for _, m := range l.Members {
			if now.Before(m.End) {
				r.leases[m.MemberID] = savedLease{epoch: m.Epoch, parts: setOf(m.Partitions), end: m.End}
			}
		}
		if g := c.groups[id]; g != nil {
			for mid := range g.members {
				delete(r.leases, mid) // joined again: its heartbeat says what it holds
			}
		}
		c.restored[id] = r
		if len(r.leases) == 0 && c.groups[id] == nil {
			stale = append(stale, id)
		}
	}
	c.withheld = time.Time{}
	for _, g := range c.groups {
		g.signal() // what was withheld may be handed out now
	}
	save := c.cfg.Save
	c.mu.Unlock()
	if save != nil {
		for _, id := range stale {
			if err := save(id, nil); err != nil {
				errs = append(errs, fmt.Errorf("group %q: remove ended leases: %w", id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// withheldLocked reports whether partition k of group must go to no member
// that does not hold it already: Withhold's window is open, or a member
// of the coordinator before may still be reading it.
func (c *ConsumerCoordinator) withheldLocked(group string, k tp, now time.Time) bool {
	if c.withholdingLocked(now) {
		return true
	}
	r := c.restored[group]
	if r == nil {
		return false
	}
	if now.Before(r.all) {
		return true
	}
	for _, l := range r.leases {
		if l.parts[k] && now.Before(l.end) {
			return true
		}
	}
	return false
}

// nextReleaseLocked is the earliest moment after now at which something
// withheld from group may be handed out.
func (c *ConsumerCoordinator) nextReleaseLocked(group string, now time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	consider := func(t time.Time) {
		if now.Before(t) && (!found || t.Before(next)) {
			next, found = t, true
		}
	}
	consider(c.withheld)
	if r := c.restored[group]; r != nil {
		consider(r.all)
		for _, l := range r.leases {
			consider(l.end)
		}
	}
	return next, found
}

// restoredJoinLocked applies a join of member id to what was restored of
// group: the member says what it holds now, so its old lease no longer
// withholds anything.
func (c *ConsumerCoordinator) restoredJoinLocked(group, id string) {
	if r := c.restored[group]; r != nil {
		delete(r.leases, id)
	}
}

// restoredEpochLocked is the epoch group had when it was saved, from
// which a group that starts again here counts on; 0 when nothing was.
func (c *ConsumerCoordinator) restoredEpochLocked(group string) int32 {
	if r := c.restored[group]; r != nil {
		return r.epoch
	}
	return 0
}

// leasesLocked is what g's leases are now: each member's holdings until
// its deadline plus the headroom (or the end saved already, when the
// deadline has not passed it), and the restored leases still live.
func (c *ConsumerCoordinator) leasesLocked(g *consumerGroup, now time.Time) map[string]savedLease {
	out := map[string]savedLease{}
	if r := c.restored[g.id]; r != nil {
		for id, l := range r.leases {
			if now.Before(l.end) {
				out[id] = l
			}
		}
	}
	for id, m := range g.members {
		parts := maps.Clone(m.assigned)
		maps.Copy(parts, m.owned)
		end := m.deadline.Add(c.leaseHeadroom())
		if old, ok := g.saved[id]; ok && !m.deadline.After(old.end) {
			end = old.end
		}
		out[id] = savedLease{epoch: m.epoch, parts: parts, end: end}
	}
	return out
}

// needSave reports whether want must be written over saved: a member came
// or went, a member holds a partition its saved lease lacks, or a lease
// ends later than saved (its deadline passed the saved end).
func needSave(saved, want map[string]savedLease) bool {
	if len(saved) != len(want) {
		return true
	}
	for id, w := range want {
		s, ok := saved[id]
		if !ok || w.end.After(s.end) {
			return true
		}
		for k := range w.parts {
			if !s.parts[k] {
				return true
			}
		}
	}
	return false
}

// saveLocked writes g's leases (ConsumerConfig.Save) when they changed in
// a way the next coordinator must know (needSave); a group whose leases
// are all gone is removed from the store. Nothing is written while
// Withhold's window is open, or while g's restored leases could not be
// read, so as not to overwrite what the coordinator before saved with
// less. An error wraps ErrNotSaved.
func (c *ConsumerCoordinator) saveLocked(g *consumerGroup, now time.Time) error {
	if c.cfg.Save == nil || c.withholdingLocked(now) {
		return nil
	}
	if r := c.restored[g.id]; r != nil && now.Before(r.all) {
		return nil
	}
	want := c.leasesLocked(g, now)
	if g.saved == nil && len(want) == 0 || !needSave(g.saved, want) {
		return nil
	}
	var data []byte
	if len(want) > 0 {
		l := Leases{Epoch: g.epoch}
		for _, id := range sortedKeys(want) {
			w := want[id]
			l.Members = append(l.Members, MemberLease{MemberID: id, Epoch: w.epoch, Partitions: w.parts.list(), End: w.end})
		}
		var err error
		if data, err = EncodeLeases(l); err != nil {
			return fmt.Errorf("group %q: %w: %w", g.id, ErrNotSaved, err)
		}
	}
	if err := c.cfg.Save(g.id, data); err != nil {
		return fmt.Errorf("group %q: %w: %w", g.id, ErrNotSaved, err)
	}
	g.saved = want
	return nil
}

// saveOrLogLocked is saveLocked where nothing waits on it (a member
// removed): the next heartbeat of the group tries again; an error is
// logged.
func (c *ConsumerCoordinator) saveOrLogLocked(g *consumerGroup, now time.Time) {
	if err := c.saveLocked(g, now); err != nil {
		c.cfg.Logger.Warn("consumer group: leases not saved; the next heartbeat tries again", slog.String("group", g.id), slog.Any("err", err))
	}
}
