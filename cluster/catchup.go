package cluster

import (
	"fmt"

	"github.com/pystream/pystream/log/segment"
)

// CatchUpResult says what CatchUp did.
type CatchUpResult struct {
	BrokerID int
	// From is the follower's log end before catch-up: the first copied
	// offset.
	From uint64
	// Copied is how many records were copied from the leader.
	Copied int
	// LogEnd is the follower's log end afterwards, equal to the leader's.
	LogEnd uint64
	// Reset is set when the follower's log ended below the leader's log
	// start (retention deleted everything it lacked): its log was reset to
	// start, empty, at LogStart before the copy. From is then LogStart.
	Reset bool
	// ResetFrom is the follower's log end before a reset.
	ResetFrom uint64
	// LogStart is the leader's log start, which the follower now shares.
	LogStart uint64
}

// CatchUp repairs a lagging follower of a partition. It first proves the
// follower's records are an exact prefix of the leader's — every shared
// record equal in offset, timestamp and payload, compared chunk by chunk —
// and then copies the leader's missing records in order. A mismatch, or a
// follower holding more records than the leader, is a
// *ReplicaDivergenceError and nothing is changed: divergence is reported,
// never repaired (RecoverReplica is the operation that truncates, and only
// for an inactive replica).
//
// A follower whose log refuses writes since a write failed (a full disk,
// docs/design.md § Sticky failure) is first reopened from disk, as
// ReopenBroker does; nothing is retried.
//
// CatchUp waits for the partition's writes in flight and holds new ones
// back while it runs. It never changes the active set.
func (c *Cluster) CatchUp(topicName string, partition, followerID int) (CatchUpResult, error) {
	return c.catchUp(topicName, partition, followerID, byOperator, nil)
}

// catchUp is CatchUp on behalf of cs; a non-nil epoch must be the
// partition's leader epoch. The journal gets an entry when records were
// copied; a refusal, or a catch-up with nothing to do (the write in flight
// got there first), changed nothing and leaves none.
func (c *Cluster) catchUp(topicName string, partition, followerID int, cs cause, epoch *uint64) (CatchUpResult, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return CatchUpResult{}, err
	}
	p.lockIdle()
	defer c.unlockIdle(p)
	if err := p.checkEpochLocked(epoch); err != nil {
		return CatchUpResult{}, err
	}
	fl, ll, err := c.followerAndLeaderLocked(p, followerID)
	if err != nil {
		return CatchUpResult{}, fmt.Errorf("cluster: catch up %s on broker %d: %w", p, followerID, err)
	}
	res, err := c.catchUpLocked(p, followerID, fl, ll)
	c.refreshHWLocked(p)
	o := c.newOp(cs, EventCatchUp, p, followerID)
	switch {
	case err != nil && res.LogEnd == res.From && !res.Reset:
		return res, err // refused before copying anything: nothing changed
	case err != nil:
		return res, o.fail(err)
	case res.Reset:
		return res, o.done(fmt.Sprintf("%s: follower %d's log ended at %d, below leader %d's log start %d: reset to start there, then caught up to %d (%d records)",
			p, followerID, res.ResetFrom, p.leader, res.LogStart, res.LogEnd, res.Copied))
	case res.Copied > 0:
		return res, o.done(fmt.Sprintf("%s: follower %d caught up from log end %d to %d (%d records from leader %d)",
			p, followerID, res.From, res.LogEnd, res.Copied, p.leader))
	}
	return res, nil
}

// followerAndLeaderLocked checks that id names a follower of p (known,
// assigned, not the leader, available) and returns its log and the
// leader's. p.mu must be held.
func (c *Cluster) followerAndLeaderLocked(p *partition, id int) (follower, leader *segment.Log, err error) {
	if err := c.checkFollowerLocked(p, id); err != nil {
		return nil, nil, err
	}
	ll, err := c.leaderLogLocked(p)
	if err != nil {
		return nil, nil, err
	}
	fl, err := c.replicaLog(p, id)
	if err != nil {
		return nil, nil, err
	}
	if fl.Failed() != nil {
		// A follower whose write failed (a full disk) refuses writes
		// until reopened: reopen it from disk first, so that the
		// catch-up copies onto what really is there.
		b := c.broker(id)
		if b == nil {
			return nil, nil, fmt.Errorf("broker %d: not registered: %w", id, ErrBrokerUnavailable)
		}
		if _, err := b.reopenReplica(replicaKey{p.topic, p.index}); err != nil {
			return nil, nil, err
		}
		if fl, err = c.replicaLog(p, id); err != nil {
			return nil, nil, err
		}
	}
	return fl, ll, nil
}

// checkFollowerLocked checks that id can name a broker, that the broker is
// known, assigned to p, and not p's leader. p.mu must be held.
func (c *Cluster) checkFollowerLocked(p *partition, id int) error {
	switch {
	case id < 1:
		return fmt.Errorf("broker %d: %w", id, ErrInvalidBrokerID)
	case !c.knownBroker(id):
		return fmt.Errorf("broker %d: %w", id, ErrUnknownBroker)
	case !p.assignedLocked(id):
		return fmt.Errorf("broker %d: %w", id, ErrNotAssigned)
	case id == p.leader:
		return fmt.Errorf("broker %d: %w", id, ErrReplicaIsLeader)
	}
	return nil
}

// catchUpLocked validates that fl is a prefix of ll and copies the rest.
// p.mu must be held with the writer slot idle.
func (c *Cluster) catchUpLocked(p *partition, id int, fl, ll *segment.Log) (CatchUpResult, error) {
	fEnd, lEnd := fl.NextOffset(), ll.NextOffset()
	res := CatchUpResult{BrokerID: id, From: fEnd, LogEnd: fEnd, LogStart: ll.LogStart()}
	if fEnd > lEnd {
		return res, &ReplicaDivergenceError{Topic: p.topic, Partition: p.index, BrokerID: id, Offset: lEnd,
			Reason: fmt.Sprintf("follower holds %d records, leader only %d", fEnd, lEnd)}
	}
	common, reason, err := commonPrefix(fl, ll, fEnd)
	if err != nil {
		return res, fmt.Errorf("cluster: compare %s on broker %d with leader: %w", p, id, err)
	}
	if common < fEnd {
		return res, &ReplicaDivergenceError{Topic: p.topic, Partition: p.index, BrokerID: id, Offset: common, Reason: reason}
	}
	// A proven prefix (or nothing left to compare): take the leader's log
	// start before copying.
	reset, oldEnd, err := alignStart(fl, ll)
	if err != nil {
		return res, fmt.Errorf("cluster: catch up %s on broker %d: %w", p, id, err)
	}
	if reset {
		res.Reset, res.ResetFrom = true, oldEnd
		fEnd = fl.NextOffset()
		res.From, res.LogEnd = fEnd, fEnd
	}
	n, err := copyRecords(fl, ll, fEnd, lEnd)
	res.Copied, res.LogEnd = n, fEnd+uint64(n)
	if err != nil {
		return res, fmt.Errorf("cluster: copy %s to broker %d: %w", p, id, err)
	}
	return res, nil
}
