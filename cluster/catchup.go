package cluster

import (
	"context"
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
// follower's records are an exact prefix of the leader's — the two
// replicas' leader-epoch histories prove the part they share, and what
// the histories cannot name, with the last chunk before the answer, is
// compared on offset, timestamp and payload (commonPrefix) — and then
// copies the leader's missing records in order. A mismatch, or a
// follower holding more records than the leader, is a
// *ReplicaDivergenceError and nothing is changed: divergence is reported,
// never repaired (RecoverReplica is the operation that truncates, and only
// for an inactive replica).
//
// A follower whose log refuses writes since a write failed (a full disk,
// docs/design.md § Sticky failure) is first reopened from disk, as
// ReopenBroker does; nothing is retried.
//
// CatchUp runs where the partition's leader is (in cluster mode, on its
// process, wherever it is asked). It waits for the partition's writes in
// flight and holds new ones back while it runs. It never changes the
// active set.
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
	if to, remote, err := c.leaderElsewhere(p, cs); err != nil {
		return CatchUpResult{}, err
	} else if remote {
		return operateOn[CatchUpResult](c, to, OperateRequest{Op: OperateCatchUp, Topic: topicName, Partition: partition, Broker: followerID,
			Epoch: epoch, By: cs.by, Reason: cs.reason}, cs)
	}
	p.lockIdle()
	defer c.unlockIdle(p)
	pm, err := c.partitionMeta(p)
	if err != nil {
		return CatchUpResult{}, err
	}
	if err := checkEpoch(p, pm, epoch); err != nil {
		return CatchUpResult{}, err
	}
	ctx, cancel := context.WithTimeout(cs.context(), c.requestTimeout)
	defer cancel()
	ll, fEnd, err := c.followerAndLeader(ctx, p, pm, followerID)
	if err != nil {
		return CatchUpResult{}, fmt.Errorf("cluster: catch up %s on broker %d: %w", p, followerID, err)
	}
	res, err := c.catchUpLocked(ctx, p, pm, followerID, ll, fEnd)
	c.refreshHW(p)
	o := c.newOp(cs, EventCatchUp, p, followerID)
	switch {
	case err != nil && res.LogEnd == res.From && !res.Reset:
		return res, err // refused before copying anything: nothing changed
	case err != nil:
		return res, o.fail(err)
	case res.Reset:
		return res, o.done(fmt.Sprintf("%s: follower %d's log ended at %d, below leader %d's log start %d: reset to start there, then caught up to %d (%d records)",
			p, followerID, res.ResetFrom, pm.Leader, res.LogStart, res.LogEnd, res.Copied))
	case res.Copied > 0:
		return res, o.done(fmt.Sprintf("%s: follower %d caught up from log end %d to %d (%d records from leader %d)",
			p, followerID, res.From, res.LogEnd, res.Copied, pm.Leader))
	}
	return res, nil
}

// followerAndLeader checks that id names a follower of the partition
// (known, assigned, not the leader) and returns the leader's log, which
// this process hosts, and the follower's log end, asked of it. A follower
// whose log refuses writes since a write failed (a full disk) is reopened
// from disk first, so that what follows acts on what really is there.
func (c *Cluster) followerAndLeader(ctx context.Context, p *partition, pm PartitionMetadata, id int) (*segment.Log, uint64, error) {
	if err := c.checkFollower(pm, id); err != nil {
		return nil, 0, err
	}
	_, ll, err := c.leaderLog(p, pm)
	if err != nil {
		return nil, 0, err
	}
	if _, err := c.transport.Replicate(ctx, id, ReplicateRequest{Topic: p.topic, Partition: p.index, Epoch: pm.LeaderEpoch, Leader: pm.Leader,
		LogStartOnly: true, Reopen: true}); err != nil {
		return nil, 0, err
	}
	fr, err := c.transport.Records(ctx, id, RecordsRequest{Topic: p.topic, Partition: p.index})
	if err != nil {
		return nil, 0, err
	}
	return ll, fr.LogEnd, nil
}

// checkFollower checks that id can name a broker, that the broker is
// known, assigned to the partition, and not its leader.
func (c *Cluster) checkFollower(pm PartitionMetadata, id int) error {
	switch {
	case id < 1:
		return fmt.Errorf("broker %d: %w", id, ErrInvalidBrokerID)
	case !c.knownBroker(id):
		return fmt.Errorf("broker %d: %w", id, ErrUnknownBroker)
	case !pm.assigned(id):
		return fmt.Errorf("broker %d: %w", id, ErrNotAssigned)
	case id == pm.Leader:
		return fmt.Errorf("broker %d: %w", id, ErrReplicaIsLeader)
	}
	return nil
}

// catchUpLocked proves follower id's log (ending at fEnd) a prefix of the
// leader's log ll and copies the rest. The partition's writer slot must
// be idle.
func (c *Cluster) catchUpLocked(ctx context.Context, p *partition, pm PartitionMetadata, id int, ll *segment.Log, fEnd uint64) (CatchUpResult, error) {
	lEnd := ll.NextOffset()
	res := CatchUpResult{BrokerID: id, From: fEnd, LogEnd: fEnd, LogStart: ll.LogStart()}
	if fEnd > lEnd {
		return res, &ReplicaDivergenceError{Topic: p.topic, Partition: p.index, BrokerID: id, Offset: lEnd,
			Reason: fmt.Sprintf("follower holds %d records, leader only %d", fEnd, lEnd)}
	}
	common, reason, err := c.commonPrefix(ctx, p, id, pm.Leader, fEnd)
	if err != nil {
		return res, fmt.Errorf("cluster: compare %s on broker %d with leader: %w", p, id, err)
	}
	if common < fEnd {
		return res, &ReplicaDivergenceError{Topic: p.topic, Partition: p.index, BrokerID: id, Offset: common, Reason: reason}
	}
	// A proven prefix (or nothing left to compare): take the leader's log
	// start before copying.
	aligned, err := c.alignStart(ctx, p, pm, id, ll)
	if err != nil {
		return res, fmt.Errorf("cluster: catch up %s on broker %d: %w", p, id, err)
	}
	if aligned.Reset {
		res.Reset, res.ResetFrom = true, aligned.ResetFrom
		fEnd = aligned.End
		res.From, res.LogEnd = fEnd, fEnd
	}
	n, err := c.copyTo(ctx, p, pm, ll, id, fEnd, lEnd)
	res.Copied, res.LogEnd = n, fEnd+uint64(n)
	if err != nil {
		return res, fmt.Errorf("cluster: copy %s to broker %d: %w", p, id, err)
	}
	return res, nil
}

// alignStart gives follower id the leader's log start. A follower whose
// log ends below it holds nothing the leader still has: its log is reset to
// start, empty, at the leader's start (segment.Log.ResetTo), and the answer
// says so. A follower that starts earlier drops what lies below the
// leader's start (segment.Log.AdvanceStart), as the leader's retention
// did. The caller holds the partition's writes back.
func (c *Cluster) alignStart(ctx context.Context, p *partition, pm PartitionMetadata, id int, ll *segment.Log) (ReplicateResponse, error) {
	res, err := c.transport.Replicate(ctx, id, ReplicateRequest{Topic: p.topic, Partition: p.index, Epoch: pm.LeaderEpoch, Leader: pm.Leader,
		LogStart: ll.LogStart(), LogStartOnly: true, Reset: true})
	if err != nil {
		return res, fmt.Errorf("cluster: take the leader's log start %d: %w", ll.LogStart(), err)
	}
	return res, nil
}

// copyTo copies the leader's records [from, to) to follower id, whose log
// ends at from, and returns how many it copied.
func (c *Cluster) copyTo(ctx context.Context, p *partition, pm PartitionMetadata, ll *segment.Log, id int, from, to uint64) (int, error) {
	copied := 0
	for at := from; at < to; {
		recs, err := readRange(ll, at, to, maxPushBytes, 0)
		if err != nil {
			return copied, err
		}
		res, err := c.sendRecords(ctx, p, pm, id, ReplicateRequest{Topic: p.topic, Partition: p.index, Epoch: pm.LeaderEpoch, Leader: pm.Leader,
			HighWatermark: p.hw.Load(), LogStart: ll.LogStart(), Records: recs})
		if err != nil {
			return copied, err
		}
		p.setFollowerEnd(id, res.End)
		copied += int(res.End - at)
		at = res.End
	}
	return copied, nil
}
