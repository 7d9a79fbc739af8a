package cluster

import (
	"context"
	"fmt"
	"slices"
)

// RecoveryResult says what RecoverReplica did, so the cost of recovery is
// visible.
type RecoveryResult struct {
	Topic     string
	Partition int
	BrokerID  int
	// CommonPrefix is the number of leading records the replica shared with
	// the leader: the offset it was truncated to.
	CommonPrefix uint64
	// Dropped records were cut from the replica: offsets DroppedFrom up to,
	// not including, DroppedTo. They were never acknowledged cluster-wide.
	Dropped     int
	DroppedFrom uint64
	DroppedTo   uint64
	// Quarantine is the file that keeps the dropped records, beside the
	// replica's log (on the replica's machine); empty when nothing was
	// dropped.
	Quarantine string
	// Copied records came from the leader afterwards.
	Copied int
	// LogEnd is the replica's log end afterwards, equal to the leader's.
	LogEnd uint64
	// Active is the partition's new active set, ascending.
	Active []int
}

// RecoverReplica brings a returning, inactive replica back into a
// partition's active set:
//
//  1. find the longest common prefix of its log and the current leader's
//     (commonPrefix: their leader-epoch histories, and offset, timestamp
//     and payload where the histories cannot tell);
//  2. copy the records past that prefix, durably, into a quarantine file
//     beside the replica's log (QuarantinePath), then truncate the
//     recovering replica — never the leader — to the prefix; the records
//     dropped were never acknowledged cluster-wide, and PyStream never
//     deletes the quarantine file;
//  3. copy the leader's missing records;
//  4. verify that the two logs are now identical;
//  5. only then add the replica to the active set, through the metadata
//     store (cluster.meta in one process, Raft in cluster mode).
//
// A returning former leader rejoins this way, as a follower. A damaged
// replica log is reported (the error wraps the *log.CorruptionError), never
// guessed through. An id below 1 (ErrInvalidBrokerID), an unknown broker
// (ErrUnknownBroker), an unassigned one (ErrNotAssigned), the leader
// (ErrReplicaIsLeader), an already active follower (ErrReplicaActive) or an
// unavailable one (ErrBrokerUnavailable) is refused without touching
// anything.
//
// RecoverReplica runs where the partition's leader is. It waits for the
// partition's writes in flight and holds new ones back while it runs.
func (c *Cluster) RecoverReplica(topicName string, partition, brokerID int) (RecoveryResult, error) {
	return c.recoverReplica(topicName, partition, brokerID, byOperator, nil)
}

// recoverReplica is RecoverReplica on behalf of cs; a non-nil epoch must be
// the partition's leader epoch.
func (c *Cluster) recoverReplica(topicName string, partition, brokerID int, cs cause, epoch *uint64) (RecoveryResult, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return RecoveryResult{}, err
	}
	if to, remote, err := c.leaderElsewhere(p, cs); err != nil {
		return RecoveryResult{}, err
	} else if remote {
		return operateOn[RecoveryResult](c, to, OperateRequest{Op: OperateRecover, Topic: topicName, Partition: partition, Broker: brokerID,
			Epoch: epoch, By: cs.by, Reason: cs.reason}, cs)
	}
	p.lockIdle()
	defer c.unlockIdle(p)
	wrap := func(err error) error {
		return fmt.Errorf("cluster: recover %s on broker %d: %w", p, brokerID, err)
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return RecoveryResult{}, err
	}
	if err := checkEpoch(p, pm, epoch); err != nil {
		return RecoveryResult{}, err
	}
	// The leader is always active: name the more precise refusal first.
	if err := c.checkFollower(pm, brokerID); err != nil {
		return RecoveryResult{}, wrap(err)
	}
	if slices.Contains(pm.Active, brokerID) {
		return RecoveryResult{}, wrap(ErrReplicaActive)
	}
	ctx, cancel := context.WithTimeout(cs.context(), c.requestTimeout)
	defer cancel()
	ll, rEnd, err := c.followerAndLeader(ctx, p, pm, brokerID)
	if err != nil {
		return RecoveryResult{}, wrap(err)
	}
	res := RecoveryResult{Topic: p.topic, Partition: p.index, BrokerID: brokerID}
	lEnd := ll.NextOffset()
	common, _, err := c.commonPrefix(ctx, p, brokerID, pm.Leader, min(rEnd, lEnd))
	if err != nil {
		return res, wrap(err)
	}
	res.CommonPrefix = common
	cmd := MetaCommand{Op: OpActivate, Topic: p.topic, Partition: p.index, Broker: brokerID, Epoch: pm.LeaderEpoch, By: cs.by, Reason: cs.reason}
	o := c.newOp(cs, EventRecover, p, brokerID)
	words := ChangeWords{Summary: fmt.Sprintf("%s: broker %d rejoins: common prefix %d with leader %d (log end %d)", p, brokerID, common, pm.Leader, lEnd)}
	at := c.now()
	if common < rEnd {
		words.Quarantine = c.relative(QuarantinePath(ReplicaDir(c.root, brokerID, p.topic, p.index), common, rEnd, at))
		words.Summary += fmt.Sprintf("; cuts offsets %d..%d (%d records, never acknowledged)", common, rEnd-1, rEnd-common)
		words.Cut = &JournalCut{From: common, To: rEnd}
	}
	if ls := ll.LogStart(); min(rEnd, common) < ls {
		words.Summary += fmt.Sprintf("; its log ends at %d, below the leader's log start %d: reset to start there", min(rEnd, common), ls)
	}
	if lEnd > max(common, ll.LogStart()) {
		words.Summary += fmt.Sprintf("; copies %d records from the leader", lEnd-max(common, ll.LogStart()))
	}
	if err := o.intend(ctx, cmd, words); err != nil {
		return res, wrap(err)
	}
	if common < rEnd {
		// What recovery cuts is kept: copied durably beside the log
		// before the log is cut.
		cut, err := c.transport.Cut(ctx, brokerID, CutRequest{Topic: p.topic, Partition: p.index, Epoch: pm.LeaderEpoch, Leader: pm.Leader,
			To: common, Quarantine: true, At: at})
		if err != nil {
			return res, o.fail(wrap(err))
		}
		res.Dropped, res.DroppedFrom, res.DroppedTo, res.Quarantine = int(rEnd-common), common, rEnd, cut.Path
	}
	// Take the leader's log start: a replica that ends below it is reset
	// to start, empty, there (what it held was all below what the leader
	// still keeps).
	aligned, err := c.alignStart(ctx, p, pm, brokerID, ll)
	if err != nil {
		return res, o.fail(wrap(err))
	}
	if aligned.Reset {
		common = aligned.End
	}
	n, err := c.copyTo(ctx, p, pm, ll, brokerID, common, lEnd)
	res.Copied, res.LogEnd = n, common+uint64(n)
	if err != nil {
		return res, o.fail(wrap(err))
	}
	same, reason, err := c.commonPrefix(ctx, p, brokerID, pm.Leader, lEnd)
	if err != nil {
		return res, o.fail(wrap(err))
	}
	end, err := c.logEnd(ctx, p, brokerID)
	if err != nil {
		return res, o.fail(wrap(err))
	}
	if same != lEnd || end != lEnd {
		return res, o.fail(&ReplicaDivergenceError{Topic: p.topic, Partition: p.index, BrokerID: brokerID, Offset: same,
			Reason: fmt.Sprintf("still differs from the leader after recovery (log end %d, leader %d): %s", end, lEnd, reason)})
	}
	words.Outcome = fmt.Sprintf("%s: broker %d active again at log end %d; %s", p, brokerID, res.LogEnd, describeLeadership(pm.withActive(brokerID)))
	next, err := o.change(ctx, cmd, words)
	if err != nil && !isJournalFailure(err) {
		return res, o.fail(wrap(fmt.Errorf("replica reconciled but not activated: %w", err)))
	}
	c.refreshHW(p)
	res.Active = slices.Clone(next.Active)
	return res, err
}

// logEnd asks broker id for its replica's log end.
func (c *Cluster) logEnd(ctx context.Context, p *partition, id int) (uint64, error) {
	res, err := c.transport.Records(ctx, id, RecordsRequest{Topic: p.topic, Partition: p.index})
	return res.LogEnd, err
}
