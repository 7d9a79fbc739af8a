package clusternode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pystream/pystream/cluster"
)

// Retention in cluster mode: each partition's leader decides, as the
// in-process cluster's does (cluster.EnforceRetention), how many of its
// oldest sealed segments its topic's retention lets go, never past the
// high watermark; it deletes them and tells its active followers the new
// log start at once, with a probe, and again with every later write. A
// follower applies it (takeLogStartLocked), and a follower that returns
// behind it is reset there when it next syncs.

// EnforceRetention runs one retention pass over the partitions this node
// leads and returns what it deleted. A partition it could not handle is
// reported in the joined error; the others are still handled.
func (n *Node) EnforceRetention(ctx context.Context) ([]cluster.RetentionResult, error) {
	var (
		out  []cluster.RetentionResult
		errs []error
	)
	for k, pm := range n.assigned() {
		if pm.Leader != n.cfg.ID {
			continue
		}
		res, err := n.retain(ctx, k, pm)
		if err != nil {
			errs = append(errs, err)
		}
		if len(res.Removed) > 0 {
			out = append(out, res)
		}
	}
	return out, errors.Join(errs...)
}

// retain is one partition's retention pass on its leader.
func (n *Node) retain(ctx context.Context, k partKey, pm cluster.PartitionMetadata) (cluster.RetentionResult, error) {
	res := cluster.RetentionResult{Topic: k.topic, Partition: k.partition}
	l, err := n.broker.Replica(k.topic, k.partition, false)
	if err != nil {
		return res, fmt.Errorf("clusternode: retention of %s/%d: %w", k.topic, k.partition, err)
	}
	r := n.replica(k.topic, k.partition)
	cfg, err := n.TopicConfig(k.topic)
	if err != nil {
		return res, fmt.Errorf("clusternode: retention of %s/%d: %w", k.topic, k.partition, err)
	}
	policy := cluster.RetentionPolicy(cfg)
	hw := r.highWatermark()
	res.From, res.To = l.LogStart(), l.LogStart()
	start, drop, err := cluster.PlanRetentionOn(l, policy, n.now(), hw)
	if err != nil {
		return res, fmt.Errorf("clusternode: retention of %s/%d: %w", k.topic, k.partition, err)
	}
	if drop == 0 {
		return res, nil
	}
	// The intent is committed through Raft before anything is deleted, so
	// that a deletion a crash interrupts is in the journal too.
	intent := cluster.JournalEntry{Event: cluster.EventRetention, Phase: cluster.PhaseIntent, By: cluster.ByRetention,
		Topic: k.topic, Partition: k.partition, Broker: n.cfg.ID, Reason: cluster.DescribePolicy(policy),
		Summary: fmt.Sprintf("%s/%d: log start %d -> %d (high watermark %d): %d segment(s) of leader %d to delete",
			k.topic, k.partition, res.From, start, hw, drop, n.cfg.ID)}
	jctx, jcancel := context.WithTimeout(ctx, 10*time.Second)
	out, err := n.propose(jctx, cluster.MetaCommand{Op: cluster.OpJournal, Entry: &intent})
	jcancel()
	if err != nil {
		return res, fmt.Errorf("clusternode: retention of %s/%d: nothing deleted: the journal's intent: %w", k.topic, k.partition, err)
	}
	removed, err := l.AdvanceStart(start)
	res.To = l.LogStart()
	res.Removed = cluster.RemovedSegments(n.cfg.ID, removed)
	e := cluster.JournalEntry{Event: cluster.EventRetention, Phase: cluster.PhaseDone, By: cluster.ByRetention,
		Topic: k.topic, Partition: k.partition, Broker: n.cfg.ID, Removed: res.Removed, Reason: cluster.DescribePolicy(policy),
		Intent: out.Journal,
		Summary: fmt.Sprintf("%s/%d: leader %d's log start %d -> %d (high watermark %d); deleted %s",
			k.topic, k.partition, n.cfg.ID, res.From, res.To, hw, cluster.DescribeRemoved(res.Removed))}
	if err != nil {
		e.Phase, e.Error = cluster.PhaseFailed, n.relativeText(err.Error())
	}
	n.journal(e)
	if err != nil {
		return res, fmt.Errorf("clusternode: retention of %s/%d: %w", k.topic, k.partition, err)
	}
	// The followers drop the same records now rather than at the next
	// write: a catch-up's probe carries the new log start.
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := n.catchUp(pctx, k.topic, k.partition, 0); err != nil {
		n.log.Warn("followers did not take the new log start yet; they take it with the next write",
			"partition", fmt.Sprintf("%s/%d", k.topic, k.partition), "log_start", res.To, "err", err)
	}
	return res, nil
}
