package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The tests below pin the controller's rules, as Plan's and Readiness's
// doc comments state them. Unless a
// case says otherwise the partition is orders/0 at leader epoch 4, broker 1
// is preferred, and failover waits planDelay.

const planDelay = 3 * time.Second

func planEnd(n uint64) *uint64 { return &n }

// planRep is an active replica on an available broker at log end n.
func planRep(id int, n uint64) PlanReplica {
	return PlanReplica{BrokerID: id, Active: true, Available: true, LogEnd: planEnd(n)}
}

// planDown is a replica on an unavailable broker: its log end is unknown.
func planDown(id int, active bool) PlanReplica {
	return PlanReplica{BrokerID: id, Active: active}
}

func planInactive(r PlanReplica) PlanReplica { r.Active = false; return r }
func planNoLog(r PlanReplica) PlanReplica    { r.LogEnd = nil; return r }
func planDiverged(r PlanReplica) PlanReplica { r.Diverged = true; return r }

// planPart is orders/0 at epoch 4 with the given leader and preferred
// replica.
func planPart(leader, preferred int, reps ...PlanReplica) PlanPartition {
	return PlanPartition{Topic: "orders", Partition: 0, Leader: leader, LeaderEpoch: 4, Preferred: preferred, Replicas: reps}
}

// planAct is an action on orders/0 at epoch 4.
func planAct(kind ActionKind, broker int, reason string) Action {
	return Action{Kind: kind, Topic: "orders", Partition: 0, Broker: broker, LeaderEpoch: 4, Reason: "orders/0: " + reason}
}

// planCase is one table row: brokers are derived from the replicas (an
// unavailable replica's broker has been down for downFor) unless brokers is
// set; ids in missing are left out of Brokers.
type planCase struct {
	name      string
	after     time.Duration
	rebalance bool
	downFor   time.Duration
	brokers   []PlanBroker
	missing   []int
	parts     []PlanPartition
	want      []Action
}

func (tc planCase) input() PlanInput {
	in := PlanInput{FailoverAfter: tc.after, Rebalance: tc.rebalance, Partitions: tc.parts, Brokers: tc.brokers}
	if tc.brokers != nil {
		return in
	}
	seen := map[int]bool{}
	for _, id := range tc.missing {
		seen[id] = true
	}
	for _, p := range tc.parts {
		for _, r := range p.Replicas {
			if seen[r.BrokerID] {
				continue
			}
			seen[r.BrokerID] = true
			b := PlanBroker{ID: r.BrokerID, Available: r.Available}
			if !r.Available {
				b.UnavailableFor = tc.downFor
			}
			in.Brokers = append(in.Brokers, b)
		}
	}
	return in
}

func runPlanCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Plan(tc.input()))
		})
	}
}

// Rule: with a usable leader, an active, usable, undiverged follower behind
// the leader is caught up — in manual and automatic mode alike.
func TestPlanCatchUp(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "lagging active follower is caught up", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 130))},
			want:  []Action{planAct(ActionCatchUp, 2, "follower 2 at log end 130, leader 1 at 136")}},
		{name: "lagging active follower is caught up in manual mode",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 130))},
			want:  []Action{planAct(ActionCatchUp, 2, "follower 2 at log end 130, leader 1 at 136")}},
		{name: "follower at the leader's log end needs nothing", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 136))}},
		{name: "every lagging follower, in broker id order", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(3, 134), planRep(2, 0))},
			want: []Action{
				planAct(ActionCatchUp, 2, "follower 2 at log end 0, leader 1 at 136"),
				planAct(ActionCatchUp, 3, "follower 3 at log end 134, leader 1 at 136"),
			}},
		{name: "diverged lagging follower is not caught up (CatchUp would refuse)",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDiverged(planRep(2, 130)))}},
		{name: "follower whose log cannot be opened is not caught up", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planNoLog(planRep(2, 0)))}},
		{name: "inactive lagging follower is not caught up (it is recovered, in automatic mode only)",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planInactive(planRep(2, 130)))}},
		{name: "no catch-up without a usable leader", after: planDelay, downFor: time.Second,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 130), planRep(3, 136))}},
	})
}

// Rule: FailoverAfter 0 is manual mode — only catch-ups, never an action
// that changes metadata, whatever the cluster looks like.
func TestPlanManualMode(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "dead leader with a candidate does not fail over", downFor: time.Hour,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136))}},
		{name: "inactive usable follower is not recovered",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planInactive(planRep(2, 136)))}},
		{name: "lagging preferred is caught up but leadership does not move", rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 130), planRep(2, 136))},
			want:  []Action{planAct(ActionCatchUp, 1, "follower 1 at log end 130, leader 2 at 136")}},
		{name: "caught-up preferred does not get leadership back", rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 136), planRep(2, 136))}},
		{name: "long-unavailable follower is not deactivated", downFor: time.Hour,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(2, true))}},
		{name: "diverged follower is not deactivated",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDiverged(planRep(2, 136)))}},
		{name: "follower ahead of the leader is not deactivated",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 140))}},
		{name: "negative FailoverAfter is manual too", after: -planDelay, downFor: time.Hour, rebalance: true,
			parts: []PlanPartition{
				planPart(1, 1, planDown(1, true), planRep(2, 136)),
				{Topic: "orders", Partition: 1, Leader: 2, LeaderEpoch: 4, Preferred: 1, Replicas: []PlanReplica{planRep(1, 136), planRep(2, 136), planInactive(planRep(3, 5))}},
			}},
	})
}

// Rule: with a usable leader and FailoverAfter > 0, an active follower is
// deactivated when its broker has been unavailable for at least
// FailoverAfter, when it diverged, or when it is ahead of the leader.
func TestPlanDeactivate(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "unavailable follower just below the delay is kept", after: planDelay, downFor: planDelay - time.Millisecond,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(3, true))}},
		{name: "unavailable follower at the delay is deactivated", after: planDelay, downFor: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(3, true))},
			want:  []Action{planAct(ActionDeactivate, 3, "follower 3 unavailable for 3.0s")}},
		{name: "unavailable follower past the delay is deactivated", after: planDelay, downFor: 4250 * time.Millisecond,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(3, true))},
			want:  []Action{planAct(ActionDeactivate, 3, "follower 3 unavailable for 4.2s")}},
		{name: "broker missing from Brokers counts as unavailable for 0", after: planDelay, downFor: time.Hour, missing: []int{3},
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(3, true))}},
		{name: "inactive unavailable follower is not deactivated again", after: planDelay, downFor: time.Hour,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(3, false))}},
		{name: "available follower whose log cannot be opened is kept (Readiness reports it), even with a stale downtime", after: planDelay,
			brokers: []PlanBroker{{ID: 1, Available: true}, {ID: 3, Available: false, UnavailableFor: time.Hour}},
			parts:   []PlanPartition{planPart(1, 1, planRep(1, 136), planNoLog(planRep(3, 0)))}},
		{name: "follower stuck just below the delay is caught up again", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStuck(planRep(2, 130), planDelay-time.Millisecond))},
			want:  []Action{planAct(ActionCatchUp, 2, "follower 2 at log end 130, leader 1 at 136")}},
		{name: "follower stuck for the delay is deactivated (Kafka's replica.lag.time.max.ms)", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStuck(planRep(2, 130), planDelay))},
			want: []Action{planAct(ActionDeactivate, 2,
				"follower 2 stuck at log end 130 behind leader 1 at 136 for 3.0s: catch-up has not brought it level")}},
		{name: "diverged follower is deactivated", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDiverged(planRep(2, 130)))},
			want:  []Action{planAct(ActionDeactivate, 2, "follower 2 diverged from leader 1 (log end 130, leader at 136)")}},
		{name: "follower ahead of the leader is deactivated", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 140))},
			want:  []Action{planAct(ActionDeactivate, 2, "follower 2 at log end 140 is ahead of leader 1 at 136")}},
		{name: "diverged and ahead is one deactivation", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDiverged(planRep(2, 140)))},
			want:  []Action{planAct(ActionDeactivate, 2, "follower 2 diverged from leader 1 (log end 140, leader at 136)")}},
		{name: "each follower gets its own action", after: planDelay, downFor: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 120), planDown(3, true), planDiverged(planRep(4, 136)))},
			want: []Action{
				planAct(ActionCatchUp, 2, "follower 2 at log end 120, leader 1 at 136"),
				planAct(ActionDeactivate, 3, "follower 3 unavailable for 3.0s"),
				planAct(ActionDeactivate, 4, "follower 4 diverged from leader 1 (log end 136, leader at 136)"),
			}},
	})
}

// Rule: with a usable leader and FailoverAfter > 0, an inactive, usable
// follower is recovered, diverged or not; never an active replica or the
// leader, never one that is not usable.
func TestPlanRecover(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "inactive usable follower is recovered", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planInactive(planRep(2, 120)))},
			want:  []Action{planAct(ActionRecover, 2, "inactive follower 2 at log end 120, leader 1 at 136")}},
		{name: "inactive follower at the leader's log end is recovered (it must rejoin the active set)", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planInactive(planRep(2, 136)))},
			want:  []Action{planAct(ActionRecover, 2, "inactive follower 2 at log end 136, leader 1 at 136")}},
		{name: "inactive diverged follower ahead of the leader is recovered", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDiverged(planInactive(planRep(2, 140))))},
			want:  []Action{planAct(ActionRecover, 2, "inactive follower 2 at log end 140 (diverged), leader 1 at 136")}},
		{name: "inactive unavailable follower is not recovered", after: planDelay, downFor: time.Hour,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(2, false))}},
		{name: "inactive follower whose log cannot be opened is not recovered", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planNoLog(planInactive(planRep(2, 0))))}},
		{name: "active follower is never recovered", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 136))}},
		{name: "leader is never recovered, even when marked inactive", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planInactive(planRep(1, 136)), planRep(2, 136))}},
		{name: "no recovery without a usable leader", after: planDelay, downFor: time.Second,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136), planInactive(planRep(3, 136)))}},
	})
}

// Rule: with an unusable leader, failover is planned only when the leader's
// broker has been unavailable for at least FailoverAfter and at least one
// active, usable, undiverged follower remains; never while the leader is
// usable, never while its broker is up. The reason lists the candidates,
// ChooseLeader's winner first.
func TestPlanFailover(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "leader down at the delay fails over", after: planDelay, downFor: planDelay,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136), planRep(3, 134))},
			want:  []Action{planAct(ActionFailover, 1, "leader 1 unavailable for 3.0s; candidates 2 (log end 136), 3 (134)")}},
		{name: "leader down just below the delay does not fail over", after: planDelay, downFor: planDelay - time.Millisecond,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136), planRep(3, 134))}},
		{name: "leader missing from Brokers counts as unavailable for 0", after: planDelay, downFor: time.Hour, missing: []int{1},
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136))}},
		{name: "winner is listed first: longest log", after: planDelay, downFor: planDelay,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 134), planRep(3, 136), planRep(4, 130))},
			want:  []Action{planAct(ActionFailover, 1, "leader 1 unavailable for 3.0s; candidates 3 (log end 136), 2 (134), 4 (130)")}},
		{name: "winner is listed first: of equals the lowest id", after: planDelay, downFor: planDelay,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(3, 136), planRep(2, 136))},
			want:  []Action{planAct(ActionFailover, 1, "leader 1 unavailable for 3.0s; candidates 2 (log end 136), 3 (136)")}},
		{name: "one candidate", after: planDelay, downFor: 10 * time.Second,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136))},
			want:  []Action{planAct(ActionFailover, 1, "leader 1 unavailable for 10.0s; candidate 2 (log end 136)")}},
		{name: "inactive, diverged and unavailable followers are not candidates", after: planDelay, downFor: planDelay,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planInactive(planRep(2, 200)), planDiverged(planRep(3, 190)),
				planDown(4, true), planNoLog(planRep(5, 0)), planRep(6, 100))},
			want: []Action{planAct(ActionFailover, 1, "leader 1 unavailable for 3.0s; candidate 6 (log end 100)")}},
		{name: "unavailable follower with a stale log end is not a candidate", after: planDelay, downFor: planDelay,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), PlanReplica{BrokerID: 2, Active: true, LogEnd: planEnd(200)}, planRep(3, 100))},
			want:  []Action{planAct(ActionFailover, 1, "leader 1 unavailable for 3.0s; candidate 3 (log end 100)")}},
		{name: "leader whose broker is listed available is not failed over, whatever its stale downtime", after: planDelay,
			brokers: []PlanBroker{{ID: 1, Available: true, UnavailableFor: time.Hour}, {ID: 2, Available: true}},
			parts:   []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136))}},
		{name: "no candidate: only inactive followers", after: planDelay, downFor: time.Hour,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planInactive(planRep(2, 136)))}},
		{name: "no candidate: only a diverged follower", after: planDelay, downFor: time.Hour,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planDiverged(planRep(2, 136)))}},
		{name: "no candidate: followers unavailable or unreadable", after: planDelay, downFor: time.Hour,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planDown(2, true), planNoLog(planRep(3, 0)))}},
		{name: "no candidate: no followers", after: planDelay, downFor: time.Hour,
			parts: []PlanPartition{planPart(1, 1, planDown(1, true))}},
		{name: "leader broker up but log not open: no failover, even with a stale downtime", after: planDelay,
			brokers: []PlanBroker{{ID: 1, Available: false, UnavailableFor: time.Hour}, {ID: 2, Available: true}},
			parts:   []PlanPartition{planPart(1, 1, planNoLog(planRep(1, 0)), planRep(2, 136))}},
		{name: "usable leader never fails over, even with a stale downtime", after: planDelay,
			brokers: []PlanBroker{{ID: 1, Available: false, UnavailableFor: time.Hour}, {ID: 2, Available: true}},
			parts:   []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 136))}},
		{name: "failover is the only action for its partition", after: planDelay, downFor: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(1, 2, planDown(1, true), planRep(2, 136), planRep(3, 120), planInactive(planRep(4, 136)), planDiverged(planRep(5, 136)))},
			want:  []Action{planAct(ActionFailover, 1, "leader 1 unavailable for 3.0s; candidates 2 (log end 136), 3 (120)")}},
	})
}

// Rule: with Rebalance and FailoverAfter > 0, leadership moves back to the
// preferred replica only when it is active, usable, undiverged, at the
// leader's log end, and nothing else is planned for the partition.
func TestPlanMoveLeader(t *testing.T) {
	move := planAct(ActionMoveLeader, 1, "leader 2 -> preferred 1 (both at log end 136)")
	runPlanCases(t, []planCase{
		{name: "caught-up preferred gets leadership back", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 136), planRep(2, 136), planRep(3, 136))},
			want:  []Action{move}},
		{name: "rebalance off", after: planDelay,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 136), planRep(2, 136))}},
		{name: "leader already preferred", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 136))}},
		{name: "preferred lagging: caught up first, no move", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 130), planRep(2, 136))},
			want:  []Action{planAct(ActionCatchUp, 1, "follower 1 at log end 130, leader 2 at 136")}},
		{name: "preferred inactive: recovered first, no move", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planInactive(planRep(1, 136)), planRep(2, 136))},
			want:  []Action{planAct(ActionRecover, 1, "inactive follower 1 at log end 136, leader 2 at 136")}},
		{name: "preferred diverged: deactivated, no move", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planDiverged(planRep(1, 136)), planRep(2, 136))},
			want:  []Action{planAct(ActionDeactivate, 1, "follower 1 diverged from leader 2 (log end 136, leader at 136)")}},
		{name: "preferred ahead: deactivated, no move", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 140), planRep(2, 136))},
			want:  []Action{planAct(ActionDeactivate, 1, "follower 1 at log end 140 is ahead of leader 2 at 136")}},
		{name: "preferred unavailable below the delay: no move", after: planDelay, rebalance: true, downFor: time.Second,
			parts: []PlanPartition{planPart(2, 1, planDown(1, true), planRep(2, 136))}},
		{name: "preferred available but log not open: no move", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planNoLog(planRep(1, 0)), planRep(2, 136))}},
		{name: "another follower lagging: catch-up only", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 136), planRep(2, 136), planRep(3, 100))},
			want:  []Action{planAct(ActionCatchUp, 3, "follower 3 at log end 100, leader 2 at 136")}},
		{name: "another follower to recover: recover only", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 136), planRep(2, 136), planInactive(planRep(3, 100)))},
			want:  []Action{planAct(ActionRecover, 3, "inactive follower 3 at log end 100, leader 2 at 136")}},
		{name: "preferred not assigned: no move", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 7, planRep(1, 136), planRep(2, 136))}},
		{name: "leader unusable: no move (failover instead)", after: planDelay, rebalance: true, downFor: planDelay,
			parts: []PlanPartition{planPart(2, 1, planRep(1, 136), planDown(2, true))},
			want: []Action{{Kind: ActionFailover, Topic: "orders", Partition: 0, Broker: 2, LeaderEpoch: 4,
				Reason: "orders/0: leader 2 unavailable for 3.0s; candidate 1 (log end 136)"}}},
	})
}

// Rule: leadership moves only to a preferred replica that is active,
// usable, undiverged and at the leader's log end. Plan also holds a move
// back while any other action is planned (TestPlanMoveLeader); this pins
// the replica check on its own.
func TestPlanMoveLeaderTarget(t *testing.T) {
	cases := []struct {
		name      string
		preferred int
		followers []PlanReplica
		want      bool
	}{
		{"active, usable, undiverged, caught up", 1, []PlanReplica{planRep(1, 136), planRep(3, 136)}, true},
		{"lagging", 1, []PlanReplica{planRep(1, 135)}, false},
		{"ahead", 1, []PlanReplica{planRep(1, 137)}, false},
		{"inactive", 1, []PlanReplica{planInactive(planRep(1, 136))}, false},
		{"diverged", 1, []PlanReplica{planDiverged(planRep(1, 136))}, false},
		{"unavailable", 1, []PlanReplica{planDown(1, true)}, false},
		{"unavailable with a stale log end", 1, []PlanReplica{{BrokerID: 1, Active: true, LogEnd: planEnd(136)}}, false},
		{"log not open", 1, []PlanReplica{planNoLog(planRep(1, 0))}, false},
		{"not a follower (the leader, or unassigned)", 2, []PlanReplica{planRep(1, 136)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, preferredCaughtUp(tc.preferred, tc.followers, 136))
		})
	}
}

// Rule: every action carries the leader epoch of the partition it was
// decided on.
func TestPlanLeaderEpoch(t *testing.T) {
	part := func(idx int, epoch uint64, leader, preferred int, reps ...PlanReplica) PlanPartition {
		return PlanPartition{Topic: "orders", Partition: idx, Leader: leader, LeaderEpoch: epoch, Preferred: preferred, Replicas: reps}
	}
	// Brokers 3 and 4 are down; 1 and 2 are up.
	in := planCase{after: planDelay, rebalance: true, downFor: planDelay, parts: []PlanPartition{
		part(0, 7, 1, 1, planRep(1, 10), planRep(2, 5)),                // catch-up
		part(1, 8, 1, 1, planRep(1, 10), planDown(3, true)),            // deactivate
		part(2, 9, 4, 4, planDown(4, true), planRep(2, 10)),            // failover
		part(3, 10, 1, 1, planRep(1, 10), planInactive(planRep(2, 3))), // recover
		part(4, 11, 2, 1, planRep(1, 10), planRep(2, 10)),              // move-leader
	}}.input()
	got := Plan(in)
	require.Len(t, got, 5)
	kinds := []ActionKind{ActionCatchUp, ActionDeactivate, ActionFailover, ActionRecover, ActionMoveLeader}
	for i, a := range got {
		require.Equal(t, kinds[i], a.Kind)
		require.Equal(t, i, a.Partition)
		require.Equal(t, uint64(7+i), a.LeaderEpoch, "%s", a)
	}
}

// Rule: partitions in topic, then partition order, followers in broker id
// order, whatever the input order; Plan does not reorder its input and
// gives the same answer twice.
func TestPlanDeterministicOrder(t *testing.T) {
	p := func(topicName string, idx int, reps ...PlanReplica) PlanPartition {
		return PlanPartition{Topic: topicName, Partition: idx, Leader: 1, LeaderEpoch: 2, Preferred: 1, Replicas: reps}
	}
	parts := []PlanPartition{
		p("payments", 1, planRep(1, 9), planRep(2, 8)),
		p("orders", 10, planRep(1, 9), planRep(3, 1), planRep(2, 2)),
		p("orders", 2, planRep(1, 9), planRep(2, 7)),
		p("payments", 0, planRep(1, 9), planInactive(planRep(2, 9))),
		p("audit", 0, planRep(1, 9), planRep(2, 9)),
	}
	in := PlanInput{FailoverAfter: planDelay, Partitions: parts}
	before := []PlanPartition{}
	for _, q := range parts {
		before = append(before, PlanPartition{Topic: q.Topic, Partition: q.Partition, Leader: q.Leader, LeaderEpoch: q.LeaderEpoch,
			Preferred: q.Preferred, Replicas: append([]PlanReplica(nil), q.Replicas...)})
	}
	got := Plan(in)
	var order []string
	for _, a := range got {
		order = append(order, a.String())
	}
	require.Equal(t, []string{
		"catch-up orders/2 broker 2 (epoch 2): follower 2 at log end 7, leader 1 at 9",
		"catch-up orders/10 broker 2 (epoch 2): follower 2 at log end 2, leader 1 at 9",
		"catch-up orders/10 broker 3 (epoch 2): follower 3 at log end 1, leader 1 at 9",
		"recover payments/0 broker 2 (epoch 2): inactive follower 2 at log end 9, leader 1 at 9",
		"catch-up payments/1 broker 2 (epoch 2): follower 2 at log end 8, leader 1 at 9",
	}, order)
	require.Equal(t, got, Plan(in))
	require.Equal(t, before, parts, "Plan must not reorder its input")
	require.Empty(t, Plan(PlanInput{FailoverAfter: planDelay}))
}

// Action.String names kind, partition, broker and epoch before the reason.
func TestPlanActionString(t *testing.T) {
	a := planAct(ActionMoveLeader, 1, "leader 2 -> preferred 1 (both at log end 136)")
	require.Equal(t, "move-leader orders/0 broker 1 (epoch 4): leader 2 -> preferred 1 (both at log end 136)", a.String())
	a.Reason = "hand-written"
	require.Equal(t, "move-leader orders/0 broker 1 (epoch 4): hand-written", a.String())
}

// Rule: a partition is ready when its leader is usable and every active
// replica is usable; an available replica whose log cannot be opened counts
// whether active or not, an inactive replica on an unavailable broker does
// not. One string per unready partition, reasons joined with "; ".
func TestReadiness(t *testing.T) {
	cases := []struct {
		name  string
		parts []PlanPartition
		want  []string
	}{
		{name: "all usable is ready",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 130))}},
		{name: "no partitions is ready"},
		{name: "inactive follower on an unavailable broker does not count",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(2, false))}},
		{name: "a follower trailing a write in flight (not stuck) is ready",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planRep(2, 130))}},
		{name: "a diverged or ahead active follower fails every write: not ready",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDiverged(planRep(2, 130)), planRep(3, 140))},
			want: []string{"orders/0: follower 2 holds records its leader lacks (writes fail until it leaves the active set); " +
				"follower 3 holds records its leader lacks (writes fail until it leaves the active set)"}},
		{name: "a stuck active follower fails every write: not ready",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStuck(planRep(2, 130), time.Second))},
			want:  []string{"orders/0: follower 2 is stuck at log end 130 behind the leader's 136 (writes fail until it is caught up)"}},
		{name: "a stuck inactive follower does not count",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planInactive(planStuck(planRep(2, 130), time.Second)))}},
		{name: "leader unavailable",
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136))},
			want:  []string{"orders/0: leader 1 is unavailable"}},
		{name: "leader missing from its replicas counts as unavailable",
			parts: []PlanPartition{planPart(1, 1, planRep(2, 136))},
			want:  []string{"orders/0: leader 1 is unavailable"}},
		{name: "leader broker up, log not open (failover refuses)",
			parts: []PlanPartition{planPart(1, 1, planNoLog(planRep(1, 0)), planRep(2, 136))},
			want:  []string{"orders/0: leader 1's log cannot be opened while its broker is up (failover waits until the broker stops)"}},
		{name: "active follower unavailable",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planDown(2, true))},
			want:  []string{"orders/0: follower 2 is unavailable"}},
		{name: "active follower log not open",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planNoLog(planRep(2, 0)))},
			want:  []string{"orders/0: follower 2's log cannot be opened"}},
		{name: "inactive follower log not open on an available broker counts",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planNoLog(planInactive(planRep(2, 0))))},
			want:  []string{"orders/0: inactive follower 2's log cannot be opened"}},
		{name: "several reasons are joined",
			parts: []PlanPartition{planPart(1, 1, planDown(1, true), planRep(2, 136), planDown(3, true))},
			want:  []string{"orders/0: leader 1 is unavailable; follower 3 is unavailable"}},
		{name: "one string per unready partition, in topic then partition order",
			parts: []PlanPartition{
				{Topic: "payments", Partition: 0, Leader: 2, Replicas: []PlanReplica{planRep(1, 5), planDown(2, true)}},
				{Topic: "orders", Partition: 3, Leader: 1, Replicas: []PlanReplica{planRep(1, 5), planRep(2, 5)}},
				{Topic: "orders", Partition: 12, Leader: 1, Replicas: []PlanReplica{planRep(1, 5), planDown(3, true), planNoLog(planRep(2, 0))}},
				{Topic: "orders", Partition: 2, Leader: 1, Replicas: []PlanReplica{planDown(1, true)}},
			},
			want: []string{
				"orders/2: leader 1 is unavailable",
				"orders/12: follower 2's log cannot be opened; follower 3 is unavailable",
				"payments/0: leader 2 is unavailable",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Readiness(PlanInput{FailoverAfter: planDelay, Partitions: tc.parts})
			require.Equal(t, tc.want, got)
		})
	}
}

// planStuck marks r stuck behind its leader for d.
func planStuck(r PlanReplica, d time.Duration) PlanReplica {
	r.Stuck, r.StuckFor = true, d
	return r
}

func planStale(r PlanReplica) PlanReplica { r.Stale = true; return r }

// Rule: nothing is decided about a follower on a report older than the
// controller's last decision about it (PlanReplica.Stale) — no catch-up,
// recovery, deactivation for a divergence, a lead or being stuck, and no
// leader move to it; only its broker's silence, which is no report, still
// deactivates it. The leader's own log end, asked of it now, is never
// stale.
func TestPlanStaleReport(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "stale lagging follower is not caught up", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStale(planRep(2, 0)))}},
		{name: "stale lagging follower is not caught up in manual mode",
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStale(planRep(2, 0)))}},
		{name: "stale stuck follower is neither caught up nor deactivated", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStale(planStuck(planRep(2, 130), time.Hour)))}},
		{name: "stale diverged follower is not deactivated", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStale(planDiverged(planRep(2, 130))))}},
		{name: "stale follower ahead of the leader is not deactivated", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStale(planRep(2, 140)))}},
		{name: "stale inactive follower is not recovered", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStale(planInactive(planRep(2, 120))))}},
		{name: "no leader move to a stale preferred replica", after: planDelay, rebalance: true,
			parts: []PlanPartition{planPart(2, 1, planStale(planRep(1, 136)), planRep(2, 136))}},
		{name: "a silent follower is deactivated, stale or not", after: planDelay, downFor: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStale(planDown(3, true)))},
			want:  []Action{planAct(ActionDeactivate, 3, "follower 3 unavailable for 3.0s")}},
		{name: "a stale follower does not hold back the others", after: planDelay,
			parts: []PlanPartition{planPart(1, 1, planRep(1, 136), planStale(planRep(2, 0)), planRep(3, 130))},
			want:  []Action{planAct(ActionCatchUp, 3, "follower 3 at log end 130, leader 1 at 136")}},
	})
}

// Rule: a report is decided on only when it reached the controller after
// its last decision about the replica; one read just now (zero time, one
// process) always is.
func TestPlanFreshReport(t *testing.T) {
	decided := time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		reportedAt time.Time
		decided    time.Time
		fresh      bool
	}{
		{"read just now, in one process", time.Time{}, decided, true},
		{"after the decision", decided.Add(time.Millisecond), decided, true},
		{"at the decision's instant", decided, decided, false},
		{"before the decision: the replica as it was", decided.Add(-300 * time.Millisecond), decided, false},
		{"no decision yet", decided, time.Time{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.fresh, FreshReport(tc.reportedAt, tc.decided))
		})
	}
}
