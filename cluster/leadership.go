package cluster

import (
	"context"
	"fmt"
	"slices"
)

// MoveResult says what MoveLeader did.
type MoveResult struct {
	Topic     string
	Partition int
	// OldLeaderBrokerID is the former leader, now an active follower.
	OldLeaderBrokerID int
	// NewLeaderBrokerID is the new leader.
	NewLeaderBrokerID int
	// LeaderEpoch is the partition's leader epoch after the move.
	LeaderEpoch uint64
	// Copied is how many records the new leader had to catch up before the
	// switch (usually none: a move is planned only for a caught-up replica).
	Copied int
	// LogEnd is the new leader's log end: the offset the next write gets.
	LogEnd uint64
}

// MoveLeader hands a partition's leadership to another active replica, a
// controlled switch with nothing lost (docs/design.md § The controller):
//
//  1. writes to the partition are paused (those in flight finish first);
//  2. the target is checked to hold an exact prefix of the leader's log and
//     given the leader's missing records, as CatchUp would;
//  3. the two logs are verified identical;
//  4. cluster.meta is written with the new leader and the leader epoch
//     plus one; the old leader stays an active follower;
//  5. writes resume, through the new leader.
//
// Only an active, available follower can take over, while the current
// leader is available too (a failed leader is replaced by Failover). An id
// below 1 (ErrInvalidBrokerID), an unknown broker (ErrUnknownBroker), an
// unassigned one (ErrNotAssigned), the leader itself (ErrReplicaIsLeader),
// an inactive replica (ErrReplicaInactive), an unavailable one
// (ErrBrokerUnavailable) or a replica that disagrees with the leader
// (*ReplicaDivergenceError) is refused; a refusal before step 4 changes no
// metadata, and a refusal at step 2 changes no log either.
func (c *Cluster) MoveLeader(topicName string, partition, brokerID int) (MoveResult, error) {
	return c.moveLeader(topicName, partition, brokerID, byOperator, nil)
}

// moveLeader is MoveLeader on behalf of cs; a non-nil epoch must be the
// partition's leader epoch.
func (c *Cluster) moveLeader(topicName string, partition, brokerID int, cs cause, epoch *uint64) (MoveResult, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return MoveResult{}, err
	}
	if to, remote, err := c.leaderElsewhere(p, cs); err != nil {
		return MoveResult{}, err
	} else if remote {
		return operateOn[MoveResult](c, to, OperateRequest{Op: OperateMoveLeader, Topic: topicName, Partition: partition, Broker: brokerID,
			Epoch: epoch, By: cs.by, Reason: cs.reason}, cs)
	}
	p.lockIdle()
	defer c.unlockIdle(p)
	wrap := func(err error) error {
		return fmt.Errorf("cluster: move leader of %s to broker %d: %w", p, brokerID, err)
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return MoveResult{}, err
	}
	if err := checkEpoch(p, pm, epoch); err != nil {
		return MoveResult{}, err
	}
	if err := c.checkFollower(pm, brokerID); err != nil {
		return MoveResult{}, wrap(err)
	}
	if !slices.Contains(pm.Active, brokerID) {
		return MoveResult{}, wrap(fmt.Errorf("broker %d: %w", brokerID, ErrReplicaInactive))
	}
	ctx, cancel := context.WithTimeout(cs.context(), c.requestTimeout)
	defer cancel()
	ll, tEnd, err := c.followerAndLeader(ctx, p, pm, brokerID)
	if err != nil {
		return MoveResult{}, wrap(err)
	}
	caught, err := c.catchUpLocked(ctx, p, pm, brokerID, ll, tEnd)
	if err != nil {
		return MoveResult{}, wrap(err)
	}
	lEnd := ll.NextOffset()
	same, reason, err := c.commonPrefix(ctx, p, brokerID, pm.Leader, lEnd)
	if err != nil {
		return MoveResult{}, wrap(err)
	}
	end, err := c.logEnd(ctx, p, brokerID)
	if err != nil {
		return MoveResult{}, wrap(err)
	}
	if same != lEnd || end != lEnd {
		return MoveResult{}, &ReplicaDivergenceError{Topic: p.topic, Partition: p.index, BrokerID: brokerID, Offset: same,
			Reason: fmt.Sprintf("differs from the leader before the move (log end %d, leader %d): %s", end, lEnd, reason)}
	}
	old := pm.Leader
	next := pm.withLeader(brokerID, nil)
	cmd := MetaCommand{Op: OpMoveLeader, Topic: p.topic, Partition: p.index, Broker: brokerID, Epoch: pm.LeaderEpoch, By: cs.by, Reason: cs.reason}
	o := c.newOp(cs, EventMoveLeader, p, brokerID)
	words := ChangeWords{Summary: fmt.Sprintf("%s: leader %d -> %d (epoch %d): both at log end %d", p, old, brokerID, next.LeaderEpoch, lEnd),
		Outcome: fmt.Sprintf("%s: %s", p, describeLeadership(next))}
	if caught.Copied > 0 {
		words.Summary += fmt.Sprintf(" after copying %d records to broker %d", caught.Copied, brokerID)
	}
	if err := o.intend(ctx, cmd, words); err != nil {
		return MoveResult{}, wrap(err)
	}
	after, err := o.change(ctx, cmd, words)
	if err != nil && !isJournalFailure(err) {
		return MoveResult{}, o.fail(wrap(fmt.Errorf("leadership not changed: %w", err)))
	}
	c.refreshHW(p)
	res := MoveResult{Topic: p.topic, Partition: p.index, OldLeaderBrokerID: old, NewLeaderBrokerID: brokerID,
		LeaderEpoch: after.LeaderEpoch, Copied: caught.Copied, LogEnd: lEnd}
	return res, err
}

// DeactivateResult says what Deactivate did.
type DeactivateResult struct {
	Topic     string
	Partition int
	BrokerID  int
	// Active is the partition's new active set, ascending.
	Active []int
}

// Deactivate takes a follower out of a partition's active set: writes stop
// waiting for it, and it can come back only through RecoverReplica. It is
// how a follower whose broker is down, or whose log diverged, stops
// holding up every write to the partition (Kafka shrinks its in-sync
// replica set the same way). The leader cannot leave (ErrReplicaIsLeader);
// an inactive follower is refused (ErrReplicaInactive), as are ids that
// name no follower of the partition (see CatchUp). The follower's broker
// need not be available. cluster.meta is written before Deactivate
// returns; on error nothing changed.
func (c *Cluster) Deactivate(topicName string, partition, brokerID int) (DeactivateResult, error) {
	return c.deactivate(topicName, partition, brokerID, byOperator, nil)
}

// deactivate is Deactivate on behalf of cs; a non-nil epoch must be the
// partition's leader epoch.
func (c *Cluster) deactivate(topicName string, partition, brokerID int, cs cause, epoch *uint64) (DeactivateResult, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return DeactivateResult{}, err
	}
	// Not lockIdle: the write in flight may be waiting for this very
	// follower to leave the active set (lockBesideWrite).
	p.lockBesideWrite()
	defer c.unlockIdle(p)
	wrap := func(err error) error {
		return fmt.Errorf("cluster: deactivate %s on broker %d: %w", p, brokerID, err)
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return DeactivateResult{}, err
	}
	if err := checkEpoch(p, pm, epoch); err != nil {
		return DeactivateResult{}, err
	}
	if err := c.checkFollower(pm, brokerID); err != nil {
		return DeactivateResult{}, wrap(err)
	}
	if !slices.Contains(pm.Active, brokerID) {
		return DeactivateResult{}, wrap(fmt.Errorf("broker %d: %w", brokerID, ErrReplicaInactive))
	}
	ctx, cancel := context.WithTimeout(cs.context(), c.requestTimeout)
	defer cancel()
	next := pm.withoutActive(brokerID)
	cmd := MetaCommand{Op: OpDeactivate, Topic: p.topic, Partition: p.index, Broker: brokerID, Epoch: pm.LeaderEpoch, By: cs.by, Reason: cs.reason}
	o := c.newOp(cs, EventDeactivate, p, brokerID)
	words := ChangeWords{Summary: fmt.Sprintf("%s: follower %d leaves the active set %v -> %v", p, brokerID, pm.Active, next.Active),
		Outcome: fmt.Sprintf("%s: %s", p, describeLeadership(next))}
	if err := o.intend(ctx, cmd, words); err != nil {
		return DeactivateResult{}, wrap(err)
	}
	after, err := o.change(ctx, cmd, words)
	if err != nil && !isJournalFailure(err) {
		return DeactivateResult{}, o.fail(wrap(fmt.Errorf("active set not changed: %w", err)))
	}
	c.refreshHW(p)
	res := DeactivateResult{Topic: p.topic, Partition: p.index, BrokerID: brokerID, Active: slices.Clone(after.Active)}
	return res, err
}
