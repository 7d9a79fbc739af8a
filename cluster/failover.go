package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Candidate is one follower considered by ChooseLeader.
type Candidate struct {
	BrokerID int
	// LogEnd is the follower's log end (meaningless when !Available).
	LogEnd uint64
	// Active is true when the follower is in the partition's active set.
	Active bool
	// Available is true when the broker is open and its log readable.
	Available bool
}

// ChooseLeader picks the follower to promote (docs/design.md § Failover): among
// the active, available candidates, the one with the largest log end — the most
// surviving history — and of equals the lowest broker id. ok is false when no
// candidate is both active and available. It is a pure function; the safety
// check that every candidate agrees with the winner is done by Failover on the
// logs.
func ChooseLeader(candidates []Candidate) (winner Candidate, ok bool) {
	for _, c := range candidates {
		if !c.Active || !c.Available {
			continue
		}
		if !ok || c.LogEnd > winner.LogEnd || c.LogEnd == winner.LogEnd && c.BrokerID < winner.BrokerID {
			winner, ok = c, true
		}
	}
	return winner, ok
}

// FailoverResult says what Failover did.
type FailoverResult struct {
	Topic     string
	Partition int
	// OldLeaderBrokerID is the failed leader, now an inactive follower.
	OldLeaderBrokerID int
	// NewLeaderBrokerID is the promoted follower.
	NewLeaderBrokerID int
	// LeaderEpoch is the partition's leader epoch after the failover.
	LeaderEpoch uint64
	// LogEndOffset is the new leader's log end: the offset the next write
	// gets. Records the old leader held at or past it were never
	// acknowledged and are gone; their offsets are reused.
	LogEndOffset uint64
	// Deactivated are the replicas that left the active set: the old leader
	// and any active follower that was unavailable too (its history could
	// not be checked against the new leader's).
	Deactivated []int
	// Active is the new active set, ascending.
	Active []int
}

// Failover replaces a partition's failed leader with a follower. The
// cluster never calls it on its own: a broker is unavailable when its
// instance is closed (in cluster mode: when its heartbeats stop), and this
// call is how an operator — or a controller following Plan, through Apply
// — reacts.
//
//   - A leader that is still usable is a *LeaderStillAvailableError.
//   - Candidates are the active followers on available brokers; ChooseLeader
//     picks the winner.
//   - Every other candidate must agree with the winner on every shared
//     offset (offset, timestamp, payload), else *ReplicaDivergenceError.
//   - No candidate is a *NoEligibleReplicaError; the recorded leader stays.
//   - The old leader stays assigned as a follower but leaves the active set,
//     as does any active follower that is unavailable.
//   - The change is committed to the metadata store (cluster.meta in one
//     process, Raft in cluster mode) before Failover returns; if that
//     fails, the error is returned and nothing changed.
//
// Every refusal leaves every log and the metadata as they were. Failover
// runs where the brokers' liveness is known (in cluster mode, on the
// controller's process, wherever it is asked). It waits for the
// partition's writes in flight and holds new ones back while it runs.
func (c *Cluster) Failover(topicName string, partition int) (FailoverResult, error) {
	return c.failover(topicName, partition, byOperator, nil)
}

// failover is Failover on behalf of cs. A non-nil epoch must be the
// partition's leader epoch, else ErrStaleAction.
func (c *Cluster) failover(topicName string, partition int, cs cause, epoch *uint64) (FailoverResult, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return FailoverResult{}, err
	}
	if to, remote, err := c.controllerElsewhere(cs); err != nil {
		return FailoverResult{}, err
	} else if remote {
		return operateOn[FailoverResult](c, to, OperateRequest{Op: OperateFailover, Topic: topicName, Partition: partition,
			Epoch: epoch, By: cs.by, Reason: cs.reason}, cs)
	}
	p.lockIdle()
	defer c.unlockIdle(p)
	pm, err := c.partitionMeta(p)
	if err != nil {
		return FailoverResult{}, err
	}
	if err := checkEpoch(p, pm, epoch); err != nil {
		return FailoverResult{}, err
	}
	old := pm.Leader
	if c.usable(p, old) {
		return FailoverResult{}, &LeaderStillAvailableError{Topic: p.topic, Partition: p.index, BrokerID: old}
	}
	ctx, cancel := context.WithTimeout(cs.context(), c.requestTimeout)
	defer cancel()
	var cands []Candidate
	var passed []string
	var unusable []int
	for _, id := range pm.Followers() {
		cand := Candidate{BrokerID: id, Active: slices.Contains(pm.Active, id)}
		end, err := c.candidateEnd(ctx, p, id)
		switch {
		case err != nil:
			passed = append(passed, fmt.Sprintf("broker %d: %v", id, err))
			if cand.Active {
				unusable = append(unusable, id)
			}
		case !cand.Active:
			passed = append(passed, fmt.Sprintf("broker %d: inactive", id))
		default:
			cand.Available, cand.LogEnd = true, end
		}
		cands = append(cands, cand)
	}
	win, ok := ChooseLeader(cands)
	if !ok {
		reason := "the partition has no followers"
		if len(passed) > 0 {
			reason = strings.Join(passed, "; ")
		}
		return FailoverResult{}, &NoEligibleReplicaError{Topic: p.topic, Partition: p.index, LeaderBrokerID: old, Reason: reason}
	}
	for _, cand := range cands {
		if !cand.Active || !cand.Available || cand.BrokerID == win.BrokerID {
			continue
		}
		upto := min(cand.LogEnd, win.LogEnd)
		common, reason, err := c.commonPrefix(ctx, p, cand.BrokerID, win.BrokerID, upto)
		if err != nil {
			return FailoverResult{}, fmt.Errorf("cluster: fail over %s: compare broker %d with %d: %w", p, cand.BrokerID, win.BrokerID, err)
		}
		if common < upto {
			return FailoverResult{}, &ReplicaDivergenceError{Topic: p.topic, Partition: p.index, BrokerID: cand.BrokerID, Offset: common,
				Reason: fmt.Sprintf("disagrees with candidate broker %d: %s", win.BrokerID, reason)}
		}
	}
	deactivated := append([]int{old}, unusable...)
	slices.Sort(deactivated)
	next := pm.withLeader(win.BrokerID, deactivated)
	cmd := MetaCommand{Op: OpFailover, Topic: p.topic, Partition: p.index, Broker: win.BrokerID, Leave: unusable, Epoch: pm.LeaderEpoch,
		By: cs.by, Reason: cs.reason, Candidates: JournalCandidates(win, cands)}
	o := c.newOp(cs, EventFailover, p, old)
	words := ChangeWords{
		Summary: fmt.Sprintf("%s: leader %d -> %d (epoch %d): %s; leaving the active set: %v",
			p, old, win.BrokerID, next.LeaderEpoch, describeCandidates(win, cands, passed), deactivated),
		Outcome: fmt.Sprintf("%s: %s, log end %d", p, describeLeadership(next), win.LogEnd)}
	if err := o.intend(ctx, cmd, words); err != nil {
		return FailoverResult{}, fmt.Errorf("cluster: fail over %s: %w", p, err)
	}
	after, err := o.change(ctx, cmd, words)
	if err != nil && !isJournalFailure(err) {
		return FailoverResult{}, o.fail(fmt.Errorf("cluster: fail over %s: leadership not changed: %w", p, err))
	}
	c.refreshHW(p)
	res := FailoverResult{Topic: p.topic, Partition: p.index, OldLeaderBrokerID: old, NewLeaderBrokerID: win.BrokerID, LeaderEpoch: after.LeaderEpoch,
		LogEndOffset: win.LogEnd, Deactivated: deactivated, Active: slices.Clone(after.Active)}
	return res, err
}

// candidateEnd asks follower id for its log end; an error means it cannot
// be a candidate (its broker is down or cannot be reached, or its log
// cannot be read).
func (c *Cluster) candidateEnd(ctx context.Context, p *partition, id int) (uint64, error) {
	pctx, cancel := context.WithTimeout(ctx, c.probeTimeout)
	defer cancel()
	if !c.hosts(id) && c.observer != nil {
		if b := c.observer.Broker(id); !b.Available {
			return 0, fmt.Errorf("broker %d: %w", id, ErrBrokerUnavailable)
		}
	}
	res, err := c.transport.Records(pctx, id, RecordsRequest{Topic: p.topic, Partition: p.index})
	return res.LogEnd, err
}

// JournalCandidates lists the failover candidates that are active and
// available, the winner first, the rest in their order, with their log
// ends: a failover entry's Candidates.
func JournalCandidates(win Candidate, cands []Candidate) []JournalCandidate {
	out := []JournalCandidate{{Broker: win.BrokerID, LogEnd: win.LogEnd}}
	for _, cand := range cands {
		if cand.Active && cand.Available && cand.BrokerID != win.BrokerID {
			out = append(out, JournalCandidate{Broker: cand.BrokerID, LogEnd: cand.LogEnd})
		}
	}
	return out
}

// describeCandidates lists the failover candidates, the winner first, with
// their log ends, and the followers passed over with why.
func describeCandidates(win Candidate, cands []Candidate, passed []string) string {
	parts := []string{fmt.Sprintf("%d (log end %d)", win.BrokerID, win.LogEnd)}
	for _, cand := range cands {
		if cand.Active && cand.Available && cand.BrokerID != win.BrokerID {
			parts = append(parts, fmt.Sprintf("%d (%d)", cand.BrokerID, cand.LogEnd))
		}
	}
	out := "candidates " + strings.Join(parts, ", ")
	if len(passed) > 0 {
		out += "; passed over: " + strings.Join(passed, "; ")
	}
	return out
}
