package cluster

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ActionKind names an operation the controller can carry out on a
// partition.
type ActionKind string

// The actions Plan can ask for, one per existing operation.
const (
	// ActionCatchUp copies the leader's missing records to a lagging
	// active follower (CatchUp).
	ActionCatchUp ActionKind = "catch-up"
	// ActionDeactivate removes an active follower from the active set
	// (Deactivate).
	ActionDeactivate ActionKind = "deactivate"
	// ActionFailover replaces a failed leader with a follower (Failover).
	ActionFailover ActionKind = "failover"
	// ActionRecover brings an inactive follower back into the active set
	// (RecoverReplica).
	ActionRecover ActionKind = "recover"
	// ActionMoveLeader moves leadership to an active, caught-up replica
	// (MoveLeader).
	ActionMoveLeader ActionKind = "move-leader"
)

// Action is one step Plan asks the controller to take.
type Action struct {
	Kind      ActionKind
	Topic     string
	Partition int
	// Broker is the follower to catch up, deactivate or recover, the new
	// leader of a move, and the failed leader of a failover.
	Broker int
	// LeaderEpoch is the partition's leader epoch the decision was made
	// on; an executor can refuse an action whose epoch is stale.
	LeaderEpoch uint64
	// Reason is a sentence with the numbers the decision was made on.
	Reason string
}

// String renders a as `kind topic/partition broker N (epoch E): reason`,
// the reason without its repeated topic/partition prefix.
func (a Action) String() string {
	reason := strings.TrimPrefix(a.Reason, fmt.Sprintf("%s/%d: ", a.Topic, a.Partition))
	return fmt.Sprintf("%s %s/%d broker %d (epoch %d): %s", a.Kind, a.Topic, a.Partition, a.Broker, a.LeaderEpoch, reason)
}

// PlanInput is what the controller observed of the cluster, and its two
// settings.
type PlanInput struct {
	// FailoverAfter is how long a broker must have been unavailable before
	// its leaderships fail over and its active replicas are deactivated.
	// Zero (or less) is manual mode: Plan only catches followers up and
	// never changes metadata.
	FailoverAfter time.Duration
	// Rebalance lets Plan move leadership back to the preferred replica
	// once it is caught up. Ignored in manual mode.
	Rebalance bool
	// Brokers are the known brokers, in any order.
	Brokers []PlanBroker
	// Partitions are the partitions to heal, in any order.
	Partitions []PlanPartition
}

// PlanBroker is one broker as the controller saw it.
type PlanBroker struct {
	ID        int
	Available bool
	// UnavailableFor is how long the broker has been seen unavailable; 0
	// when it is available.
	UnavailableFor time.Duration
}

// PlanPartition is one partition as the controller saw it.
type PlanPartition struct {
	Topic       string
	Partition   int
	Leader      int
	LeaderEpoch uint64
	// Preferred is the first replica in placement order: the leader a
	// rebalance moves leadership back to.
	Preferred int
	// Replicas are every assigned replica, leader included, ordered by
	// broker id.
	Replicas []PlanReplica
}

// PlanReplica is one replica of a partition as the controller saw it.
type PlanReplica struct {
	BrokerID int
	// Active is true when writes must reach this replica.
	Active bool
	// Available is true when the replica's broker is open.
	Available bool
	// LogEnd is the replica's log end; nil when unknown (the broker is
	// unavailable, or its log cannot be opened).
	LogEnd *uint64
	// Diverged is true when a comparison found the replica disagrees with
	// the leader.
	Diverged bool
	// Stuck is true when the replica, an active follower, was seen behind
	// its leader at this same log end on an earlier observation too: it
	// missed a write, rather than trailing one in flight. StuckFor is how
	// long it has sat there.
	Stuck    bool
	StuckFor time.Duration
	// Stale is true when what is known of the replica — its log end, its
	// divergence — comes from a report older than the controller's last
	// decision about it (an action on it, or its first sighting behind
	// its leader at this log end) or than the last change of its
	// metadata: the report tells of the replica before that, and nothing
	// is decided on it until a newer one arrives. In one process every
	// replica is read as it is now, and none is stale.
	Stale bool
}

// FreshReport reports whether a report that reached the controller at
// reportedAt (on its clock; zero when the replica was read just now) is
// newer than decided, the controller's last decision about the replica or
// the last change of its metadata: only such a report is decided on
// (PlanReplica.Stale). A report from the very moment of the decision is
// not newer.
func FreshReport(reportedAt, decided time.Time) bool {
	return reportedAt.IsZero() || reportedAt.After(decided)
}

// usable reports whether r can be read: its broker is open and its log end
// known.
func (r PlanReplica) usable() bool { return r.Available && r.LogEnd != nil }

// Plan is the controller's decision: it turns an observation into the
// actions that heal the cluster with phase 5's operations. It is pure — no I/O,
// no clock — and deterministic: partitions in topic, then partition order,
// followers of a partition in broker id order. Every action carries the
// partition's LeaderEpoch.
//
// With a usable leader (broker available, log end known):
//
//   - an active, usable, undiverged follower behind the leader is caught up;
//   - an active follower stuck behind the leader for at least FailoverAfter
//     (its catch-ups keep failing) is deactivated instead, as Kafka shrinks
//     its in-sync set after replica.lag.time.max.ms;
//   - an active follower that diverged, or holds more records than the
//     leader, is deactivated;
//   - an active follower whose broker has been unavailable for at least
//     FailoverAfter is deactivated (decided on its silence, stale or not);
//   - nothing else is decided about a Stale follower: no catch-up,
//     recovery, deactivation or leader move on a report that predates
//     the controller's last decision about it;
//   - an inactive, usable follower is recovered (RecoverReplica truncates
//     it to the common prefix first, so divergence does not matter);
//   - with Rebalance, when nothing else is planned for the partition and the
//     preferred replica is an active, usable, undiverged follower at the
//     leader's log end, leadership moves back to it.
//
// With an unusable leader only failover is planned: when the leader's
// broker has been unavailable for at least FailoverAfter and at least one
// active, usable, undiverged follower remains. A leader whose broker is up
// but whose log cannot be opened is left to an operator (Failover refuses
// it; Readiness reports it).
//
// In manual mode (FailoverAfter <= 0) only catch-ups are planned. A broker
// missing from Brokers counts as unavailable for 0.
func Plan(in PlanInput) []Action {
	down := brokerDowntime(in.Brokers)
	var out []Action
	for _, p := range sortedPartitions(in.Partitions) {
		out = append(out, planPartition(in, down, p)...)
	}
	return out
}

// planPartition is Plan for one partition.
func planPartition(in PlanInput, down map[int]time.Duration, p PlanPartition) []Action {
	auto := in.FailoverAfter > 0
	name := fmt.Sprintf("%s/%d", p.Topic, p.Partition)
	var out []Action
	add := func(kind ActionKind, broker int, format string, args ...any) {
		out = append(out, Action{Kind: kind, Topic: p.Topic, Partition: p.Partition, Broker: broker,
			LeaderEpoch: p.LeaderEpoch, Reason: name + ": " + fmt.Sprintf(format, args...)})
	}
	leader, followers := splitReplicas(p)
	if !leader.usable() {
		if !auto || leader.Available || down[p.Leader] < in.FailoverAfter {
			return nil
		}
		if cands := failoverCandidates(followers); len(cands) > 0 {
			add(ActionFailover, p.Leader, "leader %d unavailable for %s; %s", p.Leader, seconds(down[p.Leader]), cands)
		}
		return out
	}
	lEnd := *leader.LogEnd
	for _, r := range followers {
		id := r.BrokerID
		switch {
		case !r.Active:
			if auto && r.usable() && !r.Stale {
				note := ""
				if r.Diverged {
					note = " (diverged)"
				}
				add(ActionRecover, id, "inactive follower %d at log end %d%s, leader %d at %d", id, *r.LogEnd, note, p.Leader, lEnd)
			}
		case !r.usable():
			if auto && !r.Available && down[id] >= in.FailoverAfter {
				add(ActionDeactivate, id, "follower %d unavailable for %s", id, seconds(down[id]))
			}
		case r.Stale:
			// wait for a report newer than the last decision
		case auto && r.Diverged:
			add(ActionDeactivate, id, "follower %d diverged from leader %d (log end %d, leader at %d)", id, p.Leader, *r.LogEnd, lEnd)
		case auto && *r.LogEnd > lEnd:
			add(ActionDeactivate, id, "follower %d at log end %d is ahead of leader %d at %d", id, *r.LogEnd, p.Leader, lEnd)
		case auto && r.Stuck && r.StuckFor >= in.FailoverAfter && *r.LogEnd < lEnd:
			add(ActionDeactivate, id, "follower %d stuck at log end %d behind leader %d at %d for %s: catch-up has not brought it level",
				id, *r.LogEnd, p.Leader, lEnd, seconds(r.StuckFor))
		case !r.Diverged && *r.LogEnd < lEnd:
			add(ActionCatchUp, id, "follower %d at log end %d, leader %d at %d", id, *r.LogEnd, p.Leader, lEnd)
		}
	}
	if auto && in.Rebalance && len(out) == 0 && preferredCaughtUp(p.Preferred, followers, lEnd) {
		add(ActionMoveLeader, p.Preferred, "leader %d -> preferred %d (both at log end %d)", p.Leader, p.Preferred, lEnd)
	}
	return out
}

// preferredCaughtUp reports whether the preferred replica is a follower
// that can take leadership: active, usable, undiverged and at the leader's
// log end lEnd. A preferred leader is not among the followers.
func preferredCaughtUp(preferred int, followers []PlanReplica, lEnd uint64) bool {
	for _, r := range followers {
		if r.BrokerID == preferred {
			return r.Active && r.usable() && !r.Stale && !r.Diverged && *r.LogEnd == lEnd
		}
	}
	return false
}

// failoverCandidates describes the followers Failover could promote —
// active, usable, undiverged — with ChooseLeader's winner first and the
// rest in broker id order, e.g. "candidates 2 (log end 136), 3 (134)". It
// is empty when there is none.
func failoverCandidates(followers []PlanReplica) string {
	var cands []Candidate
	for _, r := range followers {
		if r.Active && r.usable() && !r.Diverged {
			cands = append(cands, Candidate{BrokerID: r.BrokerID, LogEnd: *r.LogEnd, Active: true, Available: true})
		}
	}
	win, ok := ChooseLeader(cands)
	if !ok {
		return ""
	}
	parts := []string{fmt.Sprintf("%d (log end %d)", win.BrokerID, win.LogEnd)}
	for _, c := range cands {
		if c.BrokerID != win.BrokerID {
			parts = append(parts, fmt.Sprintf("%d (%d)", c.BrokerID, c.LogEnd))
		}
	}
	label := "candidates"
	if len(parts) == 1 {
		label = "candidate"
	}
	return label + " " + strings.Join(parts, ", ")
}

// Readiness explains, one string per partition in topic, then partition
// order, why a partition is not ready; it is empty when all are. A
// partition is ready when its leader is usable and every active replica can
// take the next write: usable, not stuck behind the leader, not holding
// records the leader lacks and not diverged. (A follower merely trailing a
// write in flight is not stuck.) An inactive replica on an unavailable
// broker does not count against it; an available replica whose log cannot
// be opened, active or not, does. The reasons of one partition are joined
// with "; ", e.g.
// "orders/0: leader 1 is unavailable; follower 3 is unavailable".
func Readiness(in PlanInput) []string {
	var out []string
	for _, p := range sortedPartitions(in.Partitions) {
		leader, followers := splitReplicas(p)
		var why []string
		switch {
		case !leader.Available:
			why = append(why, fmt.Sprintf("leader %d is unavailable", p.Leader))
		case leader.LogEnd == nil:
			why = append(why, fmt.Sprintf("leader %d's log cannot be opened while its broker is up (failover waits until the broker stops)", p.Leader))
		}
		for _, r := range followers {
			switch {
			case r.Active && !r.Available:
				why = append(why, fmt.Sprintf("follower %d is unavailable", r.BrokerID))
			case r.Available && r.LogEnd == nil && r.Active:
				why = append(why, fmt.Sprintf("follower %d's log cannot be opened", r.BrokerID))
			case r.Available && r.LogEnd == nil:
				why = append(why, fmt.Sprintf("inactive follower %d's log cannot be opened", r.BrokerID))
			case !r.Active || !leader.usable():
			case r.Diverged || *r.LogEnd > *leader.LogEnd:
				why = append(why, fmt.Sprintf("follower %d holds records its leader lacks (writes fail until it leaves the active set)", r.BrokerID))
			case r.Stuck && *r.LogEnd < *leader.LogEnd:
				why = append(why, fmt.Sprintf("follower %d is stuck at log end %d behind the leader's %d (writes fail until it is caught up)",
					r.BrokerID, *r.LogEnd, *leader.LogEnd))
			}
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("%s/%d: %s", p.Topic, p.Partition, strings.Join(why, "; ")))
		}
	}
	return out
}

// sortedPartitions returns a copy of ps in topic, then partition order.
func sortedPartitions(ps []PlanPartition) []PlanPartition {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b PlanPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// splitReplicas returns p's leader replica — an unavailable one with an
// unknown log end when p.Replicas omits it — and its followers in broker
// id order.
func splitReplicas(p PlanPartition) (leader PlanReplica, followers []PlanReplica) {
	leader = PlanReplica{BrokerID: p.Leader, Active: true}
	for _, r := range p.Replicas {
		if r.BrokerID == p.Leader {
			leader = r
			continue
		}
		followers = append(followers, r)
	}
	slices.SortStableFunc(followers, func(a, b PlanReplica) int { return cmp.Compare(a.BrokerID, b.BrokerID) })
	return leader, followers
}

// brokerDowntime maps each broker id to how long it has been unavailable;
// an available broker, or one missing from bs, reads as 0.
func brokerDowntime(bs []PlanBroker) map[int]time.Duration {
	down := make(map[int]time.Duration, len(bs))
	for _, b := range bs {
		if !b.Available {
			down[b.ID] = b.UnavailableFor
		}
	}
	return down
}

// seconds renders d in seconds with one decimal, e.g. "3.0s".
func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
