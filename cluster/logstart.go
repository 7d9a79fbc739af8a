package cluster

import (
	"context"
	"fmt"
	"math"
)

// This file raises a partition's log start by hand (a Kafka
// DeleteRecords), through the path retention takes, and reads its
// leader's leader-epoch history (a Kafka OffsetForLeaderEpoch).

// LogStartAtHighWatermark, as AdvanceLogStart's offset, is the
// partition's high watermark when the leader raises its log start: every
// committed record goes.
const LogStartAtHighWatermark uint64 = math.MaxUint64

// AdvanceLogStart raises a partition's log start to offset
// (LogStartAtHighWatermark: to its high watermark) on its leader and its
// followers, as a retention pass does (EnforceRetention): the leader's
// segments wholly below it are deleted and its log start persisted, every
// available follower takes it (a follower that is down takes it from the
// leader's next write or its catch-up), and the change is journaled as an
// EventRetention entry by ByOperator, with reason. A log start only moves
// forward: an offset at or below the current one changes nothing, and the
// result's From and To are the current log start. An offset above the
// high watermark is refused with an error wrapping ErrPastHighWatermark.
// In cluster mode it runs on the leader's process.
func (c *Cluster) AdvanceLogStart(topicName string, partition int, offset uint64, reason string) (RetentionResult, error) {
	return c.advanceLogStart(topicName, partition, offset, cause{by: ByOperator, reason: reason})
}

// advanceLogStart is AdvanceLogStart on behalf of cs.
func (c *Cluster) advanceLogStart(topicName string, partition int, offset uint64, cs cause) (RetentionResult, error) {
	res := RetentionResult{Topic: topicName, Partition: partition}
	p, err := c.partition(topicName, partition)
	if err != nil {
		return res, err
	}
	if to, remote, err := c.leaderElsewhere(p, cs); err != nil {
		return res, err
	} else if remote {
		return operateOn[RetentionResult](c, to, OperateRequest{Op: OperateLogStart, Topic: topicName, Partition: partition, Offset: offset,
			By: cs.by, Reason: cs.reason}, cs)
	}
	p.lockIdle()
	defer c.unlockIdle(p)
	pm, err := c.partitionMeta(p)
	if err != nil {
		return res, err
	}
	hw := c.refreshHW(p)
	_, ll, err := c.leaderLog(p, pm)
	if err != nil {
		return res, fmt.Errorf("cluster: raise the log start of %s: %w", p, err)
	}
	res.From, res.To = ll.LogStart(), ll.LogStart()
	start := offset
	switch {
	case offset == LogStartAtHighWatermark:
		start = hw
	case offset > hw:
		return res, fmt.Errorf("cluster: raise the log start of %s to %d: the high watermark is %d: %w", p, offset, hw, ErrPastHighWatermark)
	}
	if start <= res.From {
		return res, nil // a log start only moves forward
	}
	o := c.newOp(cs, EventRetention, p, pm.Leader)
	intent := fmt.Sprintf("%s: log start %d -> %d (high watermark %d) by hand: the segments of leader %d wholly below it to delete, and what lies below on its followers",
		p, res.From, start, hw, pm.Leader)
	err = c.raiseLogStartLocked(p, pm, ll, o, "raise the log start", intent, start, hw, &res)
	return res, err
}

// LeaderEpochs is a partition's leader-epoch history as its leader holds
// it (LeaderEpochs reads it): what a Kafka OffsetForLeaderEpoch answers
// from.
type LeaderEpochs struct {
	// Leader is the broker read, and LeaderEpoch the partition's leader
	// epoch when it was read.
	Leader      int
	LeaderEpoch uint64
	// Runs are the leader's runs, oldest first (EpochRun): the first may
	// start below LogStart, and unknown runs (EpochRun.Known false) hold
	// records of no known epoch.
	Runs []EpochRun
	// LogStart and LogEnd are the leader's log start and log end.
	LogStart, LogEnd uint64
}

// LeaderEpochs reads a partition's leader's leader-epoch history, its log
// start and its log end; it changes nothing. A leader that cannot be read
// is an error wrapping ErrBrokerUnavailable.
func (c *Cluster) LeaderEpochs(topicName string, partition int) (LeaderEpochs, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return LeaderEpochs{}, err
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return LeaderEpochs{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	res, err := c.transport.Records(ctx, pm.Leader, RecordsRequest{Topic: topicName, Partition: partition, Runs: true})
	if err != nil {
		return LeaderEpochs{}, leaderError(p, pm.Leader, err)
	}
	return LeaderEpochs{Leader: pm.Leader, LeaderEpoch: pm.LeaderEpoch, Runs: res.Runs, LogStart: res.LogStart, LogEnd: res.LogEnd}, nil
}
