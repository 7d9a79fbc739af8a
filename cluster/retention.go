package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pystream/pystream/log/segment"
)

// ByRetention is the journal's name for the retention pass: entries it
// writes say By "retention".
const ByRetention = "retention"

// RemovedSegment is one segment file a retention pass deleted from one
// replica, as the journal records it.
type RemovedSegment struct {
	Broker int `json:"broker"`
	// Base and Next are the segment's first offset and one past its last.
	Base uint64 `json:"base"`
	Next uint64 `json:"next"`
}

// RetentionResult says what one partition's retention pass did.
type RetentionResult struct {
	Topic     string
	Partition int
	// From and To are the leader's log start before and after.
	From, To uint64
	// Removed are the segments deleted, leader first, oldest first.
	Removed []RemovedSegment
}

// EnforceRetention runs one retention pass over every partition whose
// leader this process hosts (every partition, in one process): the leader
// decides, by its topic's retention.ms and retention.bytes
// (segment.PlanRetention), how many of its oldest sealed segments go —
// never the active one, never one holding a record at or above the high
// watermark — and deletes them, which raises its log start. Every
// available follower then applies the same log start, deleting its own
// segments wholly below it; a follower whose log ends below the new start
// is left for catch-up, which resets it there. Each partition that changed
// gets one journal entry naming the segments and offsets removed.
//
// It returns what it changed; a partition it could not handle (an
// unavailable leader, a failed deletion) is reported in the joined error
// and the others are still handled.
func (c *Cluster) EnforceRetention() ([]RetentionResult, error) {
	var (
		out  []RetentionResult
		errs []error
	)
	for _, info := range c.Topics() {
		t, err := c.topic(info.Name)
		if err != nil {
			continue // deleted meanwhile
		}
		policy, err := c.retentionPolicy(info.Name)
		if err != nil {
			continue // deleted meanwhile
		}
		for _, p := range t.parts {
			pm, err := c.partitionMeta(p)
			if err != nil || !c.hosts(pm.Leader) {
				continue // deleted meanwhile, or another process's to do
			}
			res, err := c.retainPartition(p, policy)
			if err != nil {
				if !errors.Is(err, ErrUnknownTopic) {
					errs = append(errs, err)
				}
				continue
			}
			if len(res.Removed) > 0 {
				out = append(out, res)
			}
		}
	}
	return out, errors.Join(errs...)
}

// retainPartition is one partition's retention pass. It holds the
// partition's writes back while it deletes, as catch-up does.
func (c *Cluster) retainPartition(p *partition, policy segment.RetentionPolicy) (RetentionResult, error) {
	p.lockIdle()
	defer c.unlockIdle(p)
	res := RetentionResult{Topic: p.topic, Partition: p.index}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return res, err
	}
	hw := c.refreshHW(p)
	_, ll, err := c.leaderLog(p, pm)
	if err != nil {
		return res, fmt.Errorf("cluster: retention of %s: %w", p, err)
	}
	res.From, res.To = ll.LogStart(), ll.LogStart()
	start, drop, err := PlanRetentionOn(ll, policy, c.now(), hw)
	if err != nil {
		return res, fmt.Errorf("cluster: retention of %s: %w", p, err)
	}
	if drop == 0 {
		return res, nil
	}
	o := c.newOp(cause{by: ByRetention, reason: DescribePolicy(policy)}, EventRetention, p, pm.Leader)
	// The intent comes first, so that a deletion a crash interrupts is in
	// the journal too (reconcileJournal gives it its outcome).
	intent := fmt.Sprintf("%s: log start %d -> %d (high watermark %d): %d segment(s) of leader %d to delete, and what lies below on its followers",
		p, res.From, start, hw, drop, pm.Leader)
	err = c.raiseLogStartLocked(p, pm, ll, o, "retention", intent, start, hw, &res)
	return res, err
}

// raiseLogStartLocked raises the log start of p's leader, ll, to start,
// deleting its segments wholly below it, and has every available follower
// take the same log start (takeLogStartLocked): the path both retention
// and AdvanceLogStart take. It journals o's intent, then its outcome, with
// the segments removed, which it adds to res (whose From the caller set;
// To is the leader's log start after). what names the operation in its
// errors. The caller holds p's writes back (p.lockIdle) and checked that
// start is at most the high watermark hw.
func (c *Cluster) raiseLogStartLocked(p *partition, pm PartitionMetadata, ll *segment.Log, o *op, what, intent string, start, hw uint64, res *RetentionResult) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	off, err := o.append(ctx, o.entry(PhaseIntent, intent))
	if err != nil {
		return fmt.Errorf("cluster: %s of %s: nothing deleted: %w", what, p, err)
	}
	o.intent = &off
	removed, err := ll.AdvanceStart(start)
	res.To = ll.LogStart()
	res.Removed = append(res.Removed, RemovedSegments(pm.Leader, removed)...)
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("leader %d: %w", pm.Leader, err))
	}
	for _, id := range pm.Replicas {
		if id == pm.Leader {
			continue
		}
		fr, err := c.transport.Replicate(ctx, id, ReplicateRequest{Topic: p.topic, Partition: p.index, Epoch: pm.LeaderEpoch, Leader: pm.Leader,
			LogStart: res.To, LogStartOnly: true})
		res.Removed = append(res.Removed, fr.Removed...)
		switch {
		case err == nil:
		case unavailable(err) && len(fr.Removed) == 0:
			// A follower that is down takes the log start from its
			// leader's next write, or from its catch-up.
		default:
			errs = append(errs, fmt.Errorf("follower %d: %w", id, err))
		}
	}
	summary := fmt.Sprintf("%s: log start %d -> %d (high watermark %d); deleted %s", p, res.From, res.To, hw, DescribeRemoved(res.Removed))
	if err := errors.Join(errs...); err != nil {
		e := o.entry(PhaseFailed, summary)
		e.Removed, e.Error = res.Removed, c.relative(err.Error())
		if _, jerr := o.append(ctx, e); jerr != nil {
			err = errors.Join(err, fmt.Errorf("%w: %w", ErrJournalFailed, jerr))
		}
		return fmt.Errorf("cluster: %s of %s: %w", what, p, err)
	}
	e := o.entry(PhaseDone, summary)
	e.Removed = res.Removed
	if _, err := o.append(ctx, e); err != nil {
		return fmt.Errorf("%w: %w", ErrJournalFailed, err)
	}
	return nil
}

// PlanRetentionOn is segment.PlanRetention on a leader's log, after rolling
// its active segment when every record in it has expired too
// (segment.ExpiredActive): otherwise a partition nobody writes to would
// keep its last segment for ever.
func PlanRetentionOn(l *segment.Log, policy segment.RetentionPolicy, now time.Time, hw uint64) (start uint64, drop int, err error) {
	if segment.ExpiredActive(l.Segments(), policy, now, hw) {
		if _, err := l.Roll(); err != nil {
			return 0, 0, err
		}
	}
	start, drop = segment.PlanRetention(l.Segments(), policy, now, hw)
	return start, drop, nil
}

// RemovedSegments turns the segments a broker's log deleted into what the
// journal records.
func RemovedSegments(broker int, segs []segment.SegmentInfo) []RemovedSegment {
	out := make([]RemovedSegment, 0, len(segs))
	for _, s := range segs {
		out = append(out, RemovedSegment{Broker: broker, Base: s.Base, Next: s.Next})
	}
	return out
}

// DescribeRemoved renders removed segments per broker:
// "broker 1: offsets 0..99 (1 segment); broker 2: offsets 0..99 (2 segments)".
func DescribeRemoved(removed []RemovedSegment) string {
	var parts []string
	for i := 0; i < len(removed); {
		j := i
		for j < len(removed) && removed[j].Broker == removed[i].Broker {
			j++
		}
		n := j - i
		unit := "segments"
		if n == 1 {
			unit = "segment"
		}
		parts = append(parts, fmt.Sprintf("broker %d: offsets %d..%d (%d %s)", removed[i].Broker, removed[i].Base, removed[j-1].Next-1, n, unit))
		i = j
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}

// DescribePolicy is the reason a retention entry gives.
func DescribePolicy(p segment.RetentionPolicy) string {
	var parts []string
	if p.Age >= 0 {
		parts = append(parts, fmt.Sprintf("retention.ms %d", p.Age.Milliseconds()))
	}
	if p.Bytes >= 0 {
		parts = append(parts, fmt.Sprintf("retention.bytes %d", p.Bytes))
	}
	if len(parts) == 0 {
		return "no retention limit"
	}
	return strings.Join(parts, ", ")
}

// retentionPolicy is a topic's retention, from its effective config.
func (c *Cluster) retentionPolicy(topicName string) (segment.RetentionPolicy, error) {
	cfg, err := c.TopicConfig(topicName)
	if err != nil {
		return segment.RetentionPolicy{}, err
	}
	return RetentionPolicy(cfg), nil
}
