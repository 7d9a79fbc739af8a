package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pystream/pystream/log/segment"
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
// instance is closed, and this call is how an operator — or a controller
// following Plan, through Apply — reacts.
//
//   - A leader that is still usable is a *LeaderStillAvailableError.
//   - Candidates are the active followers on available brokers; ChooseLeader
//     picks the winner.
//   - Every other candidate must agree with the winner on every shared
//     offset (offset, timestamp, payload), else *ReplicaDivergenceError.
//   - No candidate is a *NoEligibleReplicaError; the recorded leader stays.
//   - The old leader stays assigned as a follower but leaves the active set,
//     as does any active follower that is unavailable.
//   - The change is written to cluster.meta before Failover returns; if that
//     write fails, the error is returned and nothing changed, in memory or
//     on disk.
//
// Every refusal leaves every log and cluster.meta as they were. Failover
// waits for the partition's writes in flight and holds new ones back while it
// runs.
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
	p.lockIdle()
	defer c.unlockIdle(p)
	if err := p.checkEpochLocked(epoch); err != nil {
		return FailoverResult{}, err
	}
	old := p.leader
	if _, err := c.replicaLog(p, old); err == nil {
		return FailoverResult{}, &LeaderStillAvailableError{Topic: p.topic, Partition: p.index, BrokerID: old}
	}
	var cands []Candidate
	logs := map[int]*segment.Log{}
	var passed []string
	var unusable []int
	for _, id := range p.metadataLocked().Followers() {
		cand := Candidate{BrokerID: id, Active: p.activeLocked(id)}
		l, err := c.replicaLog(p, id)
		switch {
		case err != nil:
			passed = append(passed, fmt.Sprintf("broker %d: %v", id, err))
			if cand.Active {
				unusable = append(unusable, id)
			}
		case !cand.Active:
			passed = append(passed, fmt.Sprintf("broker %d: inactive", id))
		default:
			cand.Available, cand.LogEnd = true, l.NextOffset()
			logs[id] = l
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
		common, reason, err := commonPrefix(logs[cand.BrokerID], logs[win.BrokerID], upto)
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
	before := p.metadataLocked()
	next := before.withLeader(win.BrokerID, deactivated)
	o := c.newOp(cs, EventFailover, p, old)
	o.candidates = JournalCandidates(win, cands)
	summary := fmt.Sprintf("%s: leader %d -> %d (epoch %d): %s; leaving the active set: %v",
		p, old, win.BrokerID, next.LeaderEpoch, describeCandidates(win, cands, passed), deactivated)
	if err := o.begin(summary, before, next, ""); err != nil {
		return FailoverResult{}, fmt.Errorf("cluster: fail over %s: %w", p, err)
	}
	if err := c.setPartition(p.topic, next); err != nil {
		return FailoverResult{}, o.fail(fmt.Errorf("cluster: fail over %s: leadership not changed: %w", p, err))
	}
	p.applyLocked(next)
	c.refreshHWLocked(p)
	res := FailoverResult{Topic: p.topic, Partition: p.index, OldLeaderBrokerID: old, NewLeaderBrokerID: win.BrokerID, LeaderEpoch: next.LeaderEpoch,
		LogEndOffset: win.LogEnd, Deactivated: deactivated, Active: slices.Clone(next.Active)}
	return res, o.done(fmt.Sprintf("%s: %s, log end %d", p, describeLeadership(next), win.LogEnd))
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
