package group

import (
	"time"
)

// The transitions of a classic group, each a helper that assumes
// ClassicCoordinator.mu is held (Locked). Every public operation ends with
// settleLocked, which updates the metrics, forgets a group left with
// nobody, and sets the group's timer to its next deadline.

// addMemberLocked admits a new member under id and starts (or joins) a
// rebalance; the returned channel carries the answer to its join. The
// group's first member claims it in the Registry. Lock should be held.
func (c *ClassicCoordinator) addMemberLocked(g *classicGroup, id string, req JoinRequest, now time.Time) (chan joinAnswer, error) {
	if len(g.members) == 0 {
		if err := c.reg.Claim(g.id, Classic); err != nil {
			return nil, err
		}
		g.protocolType = req.ProtocolType
	}
	g.joins++
	m := &classicMember{id: id, instanceID: req.InstanceID, clientID: req.ClientID, clientHost: req.ClientHost,
		sessionTimeout: req.SessionTimeout, rebalanceTimeout: req.RebalanceTimeout, protocols: req.Protocols,
		isNew: true, deadline: now.Add(NewMemberJoinTimeout), join: make(chan joinAnswer, 1), order: g.joins}
	g.members[id] = m
	if m.instanceID != "" {
		g.static[m.instanceID] = id
	}
	if g.leader == "" {
		g.leader = id
	}
	if g.state == StatePreparingRebalance && g.generation == 0 {
		g.newMemberAdded = true // the initial delay may extend
	}
	ch := m.join
	c.maybePrepareRebalanceLocked(g, now, "member "+id+" joined")
	return ch, nil
}

// updateMemberLocked records a known member's join with req and starts
// a rebalance if none runs; the channel carries the join's answer. A
// join the member had waiting (a retry on another connection) is
// answered ErrRebalanceInProgress. Lock should be held.
func (c *ClassicCoordinator) updateMemberLocked(g *classicGroup, m *classicMember, req JoinRequest, now time.Time, why string) chan joinAnswer {
	m.protocols, m.sessionTimeout, m.rebalanceTimeout = req.Protocols, req.SessionTimeout, req.RebalanceTimeout
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	m.answerJoin(joinAnswer{err: ErrRebalanceInProgress})
	m.join = make(chan joinAnswer, 1)
	ch := m.join
	c.maybePrepareRebalanceLocked(g, now, why)
	return ch
}

// replaceStaticLocked gives a static member that joined without its
// member id (a restart) its instance's place under newID: the old member
// id is fenced, and its waiting join or sync answered ErrFencedInstance.
// In a Stable group whose chosen protocol stays the same, the member
// keeps its assignment and no rebalance runs: the join is answered at
// once with the current generation (Kafka's
// updateStaticMemberAndRebalance). The answer's leader is the old
// leader id, so that a restarted leader does not compute an assignment
// nobody would receive; a client that reads SkipAssignment (v9+,
// KIP-814) is told it leads but must not assign. Lock should be held.
func (c *ClassicCoordinator) replaceStaticLocked(g *classicGroup, oldID, newID string, req JoinRequest, now time.Time) (JoinResult, chan joinAnswer) {
	g.commits.drain() // the old member id's commits are stale from here
	m := g.members[oldID]
	m.answerJoin(joinAnswer{err: ErrFencedInstance})
	m.answerSync(syncAnswer{err: ErrFencedInstance})
	oldLeader := g.leader
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	g.static[m.instanceID] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}
	if !m.isNew { // a new member keeps its first join's longer bound
		m.deadline = now.Add(req.SessionTimeout)
	}
	m.protocols, m.sessionTimeout, m.rebalanceTimeout = req.Protocols, req.SessionTimeout, req.RebalanceTimeout
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	c.cfg.Logger.Info("kafka group: static member rejoined", "group", g.id, "instance", m.instanceID, "member", newID, "fenced", oldID, "state", g.state)
	switch g.state {
	case StateStable:
		if selectProtocol(g.prefs()) == g.protocol {
			res := JoinResult{MemberID: newID, Generation: g.generation, ProtocolType: g.protocolType, Protocol: g.protocol, LeaderID: oldLeader}
			if g.leader == newID && req.SkipAssignmentSupported {
				res.LeaderID, res.SkipAssignment, res.Members = newID, true, g.joined()
			}
			return res, nil
		}
		m.join = make(chan joinAnswer, 1)
		ch := m.join
		c.prepareRebalanceLocked(g, now, "static member "+m.instanceID+" rejoined with other protocols")
		return JoinResult{}, ch
	case StateCompletingRebalance:
		// The leader may be assigning to the old member id: rebalance
		// so that the assignment names the new one.
		m.join = make(chan joinAnswer, 1)
		ch := m.join
		c.prepareRebalanceLocked(g, now, "static member "+m.instanceID+" rejoined during the sync")
		return JoinResult{}, ch
	default: // PreparingRebalance
		m.join = make(chan joinAnswer, 1)
		ch := m.join
		c.maybeCompleteJoinLocked(g, now)
		return JoinResult{}, ch
	}
}

// maybePrepareRebalanceLocked starts a rebalance unless one runs, in
// which case it completes the join if everyone is there now. Lock
// should be held.
func (c *ClassicCoordinator) maybePrepareRebalanceLocked(g *classicGroup, now time.Time, why string) {
	if g.state == StatePreparingRebalance {
		c.maybeCompleteJoinLocked(g, now)
		return
	}
	c.prepareRebalanceLocked(g, now, why)
}

// prepareRebalanceLocked moves the group to PreparingRebalance: waiting
// syncs are answered ErrRebalanceInProgress (their assignment is void),
// and the join completes when every member has joined again, or at the
// rebalance timeout. A new group's first rebalance waits
// ClassicConfig.InitialDelay instead. Lock should be held.
func (c *ClassicCoordinator) prepareRebalanceLocked(g *classicGroup, now time.Time, why string) {
	if g.state == StateCompletingRebalance {
		for _, m := range g.members {
			m.assignment = nil
			m.answerSync(syncAnswer{err: ErrRebalanceInProgress})
		}
	}
	clear(g.pendingSync)
	g.syncDeadline = time.Time{}
	timeout := g.rebalanceTimeout()
	g.initial = g.state == StateEmpty && c.cfg.InitialDelay > 0
	if g.initial {
		g.joinDeadline = now.Add(c.cfg.InitialDelay)
		g.delayLeft = max(timeout-c.cfg.InitialDelay, 0)
		g.newMemberAdded = false
	} else {
		g.joinDeadline = now.Add(timeout)
	}
	c.cfg.Logger.Info("kafka group: rebalancing", "group", g.id, "from", g.state, "generation", g.generation, "members", len(g.members), "why", why)
	g.state = StatePreparingRebalance
	c.cfg.Metrics.Rebalance(g.id, Classic)
	c.maybeCompleteJoinLocked(g, now)
}

// maybeCompleteJoinLocked completes the join when every member has
// joined (never during the initial delay). Lock should be held.
func (c *ClassicCoordinator) maybeCompleteJoinLocked(g *classicGroup, now time.Time) {
	if g.state == StatePreparingRebalance && !g.initial && g.allJoined() {
		c.completeJoinLocked(g, now)
	}
}

// completeJoinLocked ends PreparingRebalance (Kafka's onCompleteJoin).
// Dynamic members that did not join again are removed; static ones stay
// until their session expires, their old metadata standing in. If no
// member joined at all, the wait starts again. Otherwise the generation
// grows, the protocol is chosen, a leader is elected among those who
// joined when the old one did not, and every waiting join is answered —
// the leader's with every member's metadata. The group waits for syncs
// until the rebalance timeout. With no member left it is Empty. Lock
// should be held.
func (c *ClassicCoordinator) completeJoinLocked(g *classicGroup, now time.Time) {
	g.initial = false
	for _, m := range g.ordered() {
		if m.join == nil && m.instanceID == "" {
			c.removeMemberLocked(g, m, "did not join again within the rebalance timeout")
		}
	}
	if len(g.members) > 0 && g.firstJoined() == "" {
		g.joinDeadline = now.Add(g.rebalanceTimeout())
		return
	}
	if l := g.members[g.leader]; l == nil || l.join == nil {
		g.leader = g.firstJoined()
	}
	g.commits.drain() // the old generation's commits are stale from here
	g.generation++
	if len(g.members) == 0 {
		g.state, g.protocol = StateEmpty, ""
		return
	}
	g.protocol = selectProtocol(g.prefs())
	g.state = StateCompletingRebalance
	joined := g.joined()
	for _, m := range g.ordered() {
		res := JoinResult{MemberID: m.id, Generation: g.generation, ProtocolType: g.protocolType, Protocol: g.protocol, LeaderID: g.leader}
		if m.id == g.leader {
			res.Members = joined
		}
		m.answerJoin(joinAnswer{res: res})
		m.deadline = now.Add(m.sessionTimeout)
		m.isNew = false
		g.pendingSync[m.id] = true
	}
	g.syncDeadline = now.Add(g.rebalanceTimeout())
	c.cfg.Logger.Info("kafka group: generation complete", "group", g.id, "generation", g.generation, "protocol", g.protocol, "leader", g.leader, "members", len(g.members))
}

// removeMemberLocked takes m out of the group: its waiting join or sync
// is answered ErrUnknownMember, a new leader is the earliest member left,
// and the group's last member releases it in the Registry. The caller
// decides what the group does next (afterRemovalLocked). Lock should be
// held.
func (c *ClassicCoordinator) removeMemberLocked(g *classicGroup, m *classicMember, why string) {
	g.commits.drain() // m's commits are refused from here
	m.answerJoin(joinAnswer{err: ErrUnknownMember})
	m.answerSync(syncAnswer{err: ErrUnknownMember})
	delete(g.members, m.id)
	delete(g.pendingSync, m.id)
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
	if g.leader == m.id {
		g.leader = ""
		if ms := g.ordered(); len(ms) > 0 {
			g.leader = ms[0].id
		}
	}
	if len(g.members) == 0 {
		c.reg.Release(g.id, Classic)
	}
	c.cfg.Logger.Info("kafka group: member removed", "group", g.id, "member", m.id, "instance", m.instanceID, "why", why)
}

// afterRemovalLocked is what a group does once members left: a settled
// group rebalances, a rebalancing one may complete its join now. Lock
// should be held.
func (c *ClassicCoordinator) afterRemovalLocked(g *classicGroup, now time.Time, why string) {
	switch g.state {
	case StateStable, StateCompletingRebalance:
		c.prepareRebalanceLocked(g, now, why)
	case StatePreparingRebalance:
		c.maybeCompleteJoinLocked(g, now)
	}
}

// expireLocked applies every deadline of the group that is due at now:
// member ids given out and never used are forgotten, members whose
// session expired are removed, a rebalance whose time is up completes
// (or extends its initial delay), and members that never synced are
// removed. Lock should be held.
func (c *ClassicCoordinator) expireLocked(g *classicGroup, now time.Time) {
	forgotten := false
	for id, d := range g.pending {
		if !now.Before(d) {
			delete(g.pending, id)
			forgotten = true
		}
	}
	removed := false
	for _, m := range g.ordered() {
		if m.expired(now) {
			c.removeMemberLocked(g, m, "session timeout: no heartbeat for "+m.sessionTimeout.String())
			removed = true
		}
	}
	if removed {
		c.afterRemovalLocked(g, now, "session timeout")
	} else if forgotten {
		c.maybeCompleteJoinLocked(g, now)
	}
	if g.state == StatePreparingRebalance && !now.Before(g.joinDeadline) {
		if g.initial && g.newMemberAdded && g.delayLeft > 0 {
			d := min(c.cfg.InitialDelay, g.delayLeft)
			g.delayLeft -= d
			g.newMemberAdded = false
			g.joinDeadline = now.Add(d)
		} else {
			c.completeJoinLocked(g, now)
		}
	}
	if len(g.pendingSync) > 0 && (g.state == StateCompletingRebalance || g.state == StateStable) && !now.Before(g.syncDeadline) {
		for _, m := range g.ordered() {
			if g.pendingSync[m.id] {
				c.removeMemberLocked(g, m, "did not sync within the rebalance timeout")
			}
		}
		c.prepareRebalanceLocked(g, now, "members did not sync")
	}
}

// settleLocked ends every operation on g: it updates g's metrics,
// forgets g when it has neither members nor member ids given out, and
// sets g's timer to its next deadline. Lock should be held.
func (c *ClassicCoordinator) settleLocked(g *classicGroup) {
	if len(g.members) > 0 {
		c.cfg.Metrics.Members(g.id, Classic, len(g.members))
		c.cfg.Metrics.Generation(g.id, Classic, g.generation)
	} else {
		c.cfg.Metrics.Forget(g.id, Classic)
	}
	if len(g.members) == 0 && len(g.pending) == 0 && g.state == StateEmpty {
		if g.timer != nil {
			g.timer.Stop()
		}
		if c.groups[g.id] == g {
			delete(c.groups, g.id)
		}
		return
	}
	next := g.nextDeadline()
	switch {
	case next.IsZero():
		if g.timer != nil {
			g.timer.Stop()
		}
	case g.timer == nil:
		g.timer = time.AfterFunc(time.Until(next), func() { c.fire(g) })
	default:
		g.timer.Reset(time.Until(next))
	}
}

// fire runs g's due deadlines: the body of g's timer.
func (c *ClassicCoordinator) fire(g *classicGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.groups[g.id] != g {
		return
	}
	c.expireLocked(g, time.Now())
	c.settleLocked(g)
}
