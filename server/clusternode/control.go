package clusternode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/controller"
)

// controlView is the cluster as the controller sees it in cluster mode
// (controller.Cluster): the metadata replicated through Raft, and the
// brokers' heartbeats. Its actions are commands committed through Raft —
// the same planner as in one process, fed by heartbeats.
type controlView struct {
	n *Node
}

var _ controller.Cluster = (*controlView)(nil)

// actionTimeout bounds one action of the controller.
const actionTimeout = 10 * time.Second

// Brokers lists the registered brokers; one is available while its
// heartbeats arrive, and DownSince is its last one.
func (v *controlView) Brokers() []cluster.BrokerInfo {
	now := v.n.now()
	var out []cluster.BrokerInfo
	v.n.fsm.read(func(s *cluster.MetaState) {
		for _, id := range s.Meta.Brokers {
			last, up := v.n.hbs.seen(id, now)
			b := cluster.BrokerInfo{ID: id, Available: up}
			if !up {
				b.DownSince = last
			}
			out = append(out, b)
		}
	})
	return out
}

// Topics lists the topics by name.
func (v *controlView) Topics() []cluster.TopicInfo { return v.n.Topics() }

// Status is a partition as the metadata and the heartbeats describe it.
func (v *controlView) Status(topicName string, partition int) (cluster.PartitionStatus, error) {
	pm, err := v.n.fsm.partition(topicName, partition)
	if err != nil {
		return cluster.PartitionStatus{}, err
	}
	now := v.n.now()
	st := statusOf(topicName, pm)
	for i := range st.Replicas {
		rs := &st.Replicas[i]
		_, rs.Available = v.n.hbs.seen(rs.BrokerID, now)
		rep, ok := v.n.hbs.report(rs.BrokerID, partKey{topicName, partition})
		switch {
		case !rs.Available || !ok:
		case rep.Error != "":
			rs.Err = errors.New(rep.Error)
		default:
			rs.LogEnd = rep.LogEnd
			if rep.Diverged {
				rs.Err = fmt.Errorf("broker %d: %w", rs.BrokerID, cluster.ErrReplicaDivergence)
			}
		}
	}
	capFollowers(&st)
	return st, nil
}

// capFollowers keeps an active follower's reported log end from passing
// its leader's. Each heartbeat is a snapshot of its own moment: a
// follower's report taken after a write can be newer than its leader's
// taken before it. An active follower takes only records its leader
// appended first (follower.go), so the lead is the reports' age, not
// records the leader lacks — for which the planner would deactivate it.
// Records a follower holds that its leader does not are cut at its sync
// with each epoch, and a disagreement is reported as Diverged.
func capFollowers(st *cluster.PartitionStatus) {
	var leaderEnd *uint64
	for _, rs := range st.Replicas {
		if rs.BrokerID == st.Leader {
			leaderEnd = rs.LogEnd
		}
	}
	if leaderEnd == nil {
		return
	}
	for i := range st.Replicas {
		rs := &st.Replicas[i]
		if rs.BrokerID != st.Leader && rs.Active && rs.LogEnd != nil && *rs.LogEnd > *leaderEnd {
			end := *leaderEnd
			rs.LogEnd = &end
		}
	}
}

// statusOf is pm as a PartitionStatus with nothing observed yet.
func statusOf(topicName string, pm cluster.PartitionMetadata) cluster.PartitionStatus {
	st := cluster.PartitionStatus{Topic: topicName, Partition: pm.Partition, Leader: pm.Leader, LeaderEpoch: pm.LeaderEpoch,
		Preferred: pm.Preferred(), Placement: slices.Clone(pm.Replicas), Followers: pm.Followers(), Assigned: pm.Assigned(),
		Active: slices.Clone(pm.Active)}
	for _, id := range pm.Assigned() {
		role := cluster.RoleFollower
		if id == pm.Leader {
			role = cluster.RoleLeader
		}
		st.Replicas = append(st.Replicas, cluster.ReplicaStatus{BrokerID: id, Role: role, Active: slices.Contains(pm.Active, id)})
	}
	return st
}

// Apply carries out one action of the planner.
func (v *controlView) Apply(a cluster.Action) (cluster.ApplyResult, error) {
	ctx, cancel := context.WithTimeout(v.n.ctx, actionTimeout)
	defer cancel()
	cmd := cluster.MetaCommand{By: cluster.ByController, Reason: a.Reason, Topic: a.Topic, Partition: a.Partition,
		Broker: a.Broker, Epoch: a.LeaderEpoch}
	switch a.Kind {
	case cluster.ActionCatchUp:
		return v.catchUp(ctx, a)
	case cluster.ActionDeactivate:
		cmd.Op = cluster.OpDeactivate
	case cluster.ActionFailover:
		winner, leave, cands, err := v.failoverCandidate(a)
		if err != nil {
			return cluster.ApplyResult{}, err
		}
		cmd.Op, cmd.Broker, cmd.Leave, cmd.Candidates = cluster.OpFailover, winner, leave, cands
	case cluster.ActionRecover:
		if err := v.readyToRejoin(a); err != nil {
			return cluster.ApplyResult{}, err
		}
		cmd.Op = cluster.OpActivate
	default:
		return cluster.ApplyResult{}, fmt.Errorf("clusternode: %s: %w", a.Kind, ErrNotInClusterMode)
	}
	res, err := v.n.propose(ctx, cmd)
	if err != nil {
		return cluster.ApplyResult{}, err
	}
	return cluster.ApplyResult{Changed: true, Summary: res.Summary, Journaled: true}, nil
}

// failoverCandidate chooses the new leader among the active followers
// whose brokers report (cluster.ChooseLeader: the longest log, ties to the
// lowest id); the active replicas that do not report leave the active set
// with the old leader; cands are the candidates compared, for the
// journal. Every active follower holds every acknowledged record, so a
// report a heartbeat old chooses safely.
func (v *controlView) failoverCandidate(a cluster.Action) (winner int, leave []int, cands []cluster.JournalCandidate, err error) {
	st, err := v.Status(a.Topic, a.Partition)
	if err != nil {
		return 0, nil, nil, err
	}
	var all []cluster.Candidate
	for _, r := range st.Replicas {
		if r.BrokerID == st.Leader {
			continue
		}
		c := cluster.Candidate{BrokerID: r.BrokerID, Active: r.Active, Available: r.Available && r.LogEnd != nil && r.Err == nil}
		if c.Available {
			c.LogEnd = *r.LogEnd
		} else if r.Active {
			leave = append(leave, r.BrokerID)
		}
		all = append(all, c)
	}
	win, ok := cluster.ChooseLeader(all)
	if !ok {
		return 0, nil, nil, &cluster.NoEligibleReplicaError{Topic: a.Topic, Partition: a.Partition, LeaderBrokerID: st.Leader,
			Reason: "no active follower reports a readable log"}
	}
	sort.Ints(leave)
	return win.BrokerID, leave, cluster.JournalCandidates(win, all), nil
}

// readyToRejoin checks that the replica has proved itself a prefix of its
// leader at the current epoch and caught up: its heartbeat says so.
func (v *controlView) readyToRejoin(a cluster.Action) error {
	rep, ok := v.n.hbs.report(a.Broker, partKey{a.Topic, a.Partition})
	if !ok || !rep.CaughtUp || rep.SyncedEpoch != a.LeaderEpoch {
		return fmt.Errorf("clusternode: %s/%d: broker %d has not yet caught up with its leader at epoch %d: %w",
			a.Topic, a.Partition, a.Broker, a.LeaderEpoch, cluster.ErrReplicaInactive)
	}
	return nil
}

// catchUp asks the partition's leader to bring the follower level.
func (v *controlView) catchUp(ctx context.Context, a cluster.Action) (cluster.ApplyResult, error) {
	pm, err := v.n.fsm.partition(a.Topic, a.Partition)
	if err != nil {
		return cluster.ApplyResult{}, err
	}
	if pm.LeaderEpoch != a.LeaderEpoch {
		return cluster.ApplyResult{}, cluster.ErrStaleAction
	}
	before, _ := v.n.hbs.report(a.Broker, partKey{a.Topic, a.Partition})
	ctx, stop := v.whileReporting(ctx, pm.Leader, a.Broker)
	defer stop()
	var end uint64
	if pm.Leader == v.n.cfg.ID {
		res, err := v.n.catchUp(ctx, a.Topic, a.Partition, a.Broker)
		if err != nil {
			return cluster.ApplyResult{}, err
		}
		end = res.End
	} else {
		addr, err := v.n.addrOf(pm.Leader)
		if err != nil {
			return cluster.ApplyResult{}, err
		}
		res, err := v.n.rpc.CatchUp(ctx, addr, a.Topic, a.Partition, a.Broker)
		if err != nil {
			return cluster.ApplyResult{}, err
		}
		end = res.End
	}
	changed := before.LogEnd == nil || *before.LogEnd < end
	return cluster.ApplyResult{Changed: changed, Summary: fmt.Sprintf("%s/%d: broker %d caught up to %d", a.Topic, a.Partition, a.Broker, end)}, nil
}

// whileReporting is ctx, cancelled as soon as one of the brokers ids stops
// reporting. A catch-up waits on its leader and its follower; one whose
// process stopped answering without closing its connections (paused, cut
// off by the network) would hold the controller's loop — and every
// failover behind it — until the connection timed out, several seconds
// past the failover delay.
func (v *controlView) whileReporting(parent context.Context, ids ...int) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	every := HeartbeatInterval(v.n.cfg.FailoverAfter)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			for _, id := range ids {
				if _, up := v.n.hbs.seen(id, v.n.now()); !up {
					cancel()
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return ctx, cancel
}

// JournalRefusal records a refused action through Raft.
func (v *controlView) JournalRefusal(a cluster.Action, refusal error) error {
	ev := map[cluster.ActionKind]cluster.JournalEvent{cluster.ActionCatchUp: cluster.EventCatchUp, cluster.ActionDeactivate: cluster.EventDeactivate,
		cluster.ActionFailover: cluster.EventFailover, cluster.ActionRecover: cluster.EventRecover, cluster.ActionMoveLeader: cluster.EventMoveLeader}[a.Kind]
	ctx, cancel := context.WithTimeout(v.n.ctx, actionTimeout)
	defer cancel()
	e := cluster.JournalEntry{Event: ev, Phase: cluster.PhaseRefused, By: cluster.ByController, Topic: a.Topic, Partition: a.Partition,
		Broker: a.Broker, Summary: a.String(), Reason: a.Reason, Error: v.n.relative(refusal.Error())}
	_, err := v.n.propose(ctx, cluster.MetaCommand{Op: cluster.OpJournal, Entry: &e})
	return err
}
