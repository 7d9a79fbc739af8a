package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Replica roles as Status reports them.
const (
	RoleLeader   = "leader"
	RoleFollower = "follower"
)

// ReplicaStatus is one replica of a partition as Status sees it.
type ReplicaStatus struct {
	BrokerID int
	// Role is RoleLeader or RoleFollower.
	Role string
	// Active is true when writes must reach this replica.
	Active bool
	// Available is true when the broker is registered and open.
	Available bool
	// LogEnd is the offset the replica's next record would get. Nil when it
	// is unknown: the broker is unavailable, or its log cannot be opened
	// (Err says why). Never a made-up zero.
	LogEnd *uint64
	// Lag is how far LogEnd trails the leader's log end. Nil when either is
	// unknown, or when the replica is ahead of the leader (it diverges; Err
	// says so).
	Lag *uint64
	// Err explains a nil LogEnd or Lag on an available broker.
	Err error
	// ReportedAt is when the report Status tells of reached the controller
	// (cluster mode: a follower's last heartbeat, by the controller's
	// clock); zero when it was
	// read just now — in this process, or, for the leader's replica in
	// cluster mode, asked of the leader.
	ReportedAt time.Time
}

// PartitionStatus is a partition's leadership, replicas and high watermark.
type PartitionStatus struct {
	Topic     string
	Partition int
	Leader    int
	// LeaderEpoch counts the partition's leader changes.
	LeaderEpoch uint64
	// Preferred is the first replica in placement order: the leader a
	// rebalance moves leadership back to.
	Preferred int
	// Placement is the assigned brokers in placement order, the
	// preferred leader first.
	Placement []int
	// Followers are the assigned followers, ascending.
	Followers []int
	// Assigned are all assigned brokers (leader and followers), ascending.
	Assigned []int
	// Active are the replicas a write must reach, ascending. Fewer active
	// than assigned means reduced redundancy until RecoverReplica.
	Active []int
	// HighWatermark is the end of the prefix every active replica holds;
	// consumers are served only records below it.
	HighWatermark uint64
	// Replicas are ordered by broker id.
	Replicas []ReplicaStatus
}

// Status reports a partition's leader, every replica's role, active flag,
// availability, log end and lag, and the high watermark. It only observes:
// nothing is repaired and no replica set changes. In one process every
// replica is read as it is now; in cluster mode every process reports what
// the controller knows from the brokers' heartbeats, each replica with the
// time of its report, so that every process tells the same.
func (c *Cluster) Status(topicName string, partition int) (PartitionStatus, error) {
	return c.status(topicName, partition, true)
}

// Observe is Status without moving the high watermark: in one process
// Status first raises it to what every active replica holds, reading the
// followers, and Observe reports it as it stands (in cluster mode the two
// are the same). The controller reads every partition with it on every
// pass: it plans on leaders, active sets, replicas and log ends, never on
// the watermark, which the writes raise, and which reads, Status and the
// operations that move records (catch-up, recovery, failover) refresh.
func (c *Cluster) Observe(topicName string, partition int) (PartitionStatus, error) {
	return c.status(topicName, partition, false)
}

// status is Status, and Observe without refresh.
func (c *Cluster) status(topicName string, partition int, refresh bool) (PartitionStatus, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return PartitionStatus{}, err
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return PartitionStatus{}, err
	}
	st := statusOf(p.topic, pm)
	if c.observer == nil && refresh {
		st.HighWatermark = c.refreshHW(p)
	} else {
		st.HighWatermark = p.hw.Load()
	}
	ends := map[int]uint64{}
	for i := range st.Replicas {
		rs := &st.Replicas[i]
		c.observeReplica(p, rs)
		if rs.LogEnd != nil {
			ends[rs.BrokerID] = *rs.LogEnd
		}
	}
	if c.observer != nil {
		if rep, ok := c.observer.Replica(pm.Leader, p.topic, p.index); ok {
			st.HighWatermark = max(st.HighWatermark, rep.HighWatermark)
		}
		// The leader knows its own log end and the high watermark first
		// hand: asked, it answers them as of now (a leader that does not
		// answer within a moment leaves its last report; one the
		// heartbeats show down is not asked).
		if c.hosts(pm.Leader) || c.observer.Broker(pm.Leader).Available {
			if res, err := c.leaderBounds(p, pm); err == nil {
				st.HighWatermark = res.HighWatermark
				for i := range st.Replicas {
					if rs := &st.Replicas[i]; rs.BrokerID == pm.Leader {
						end := res.LogEnd
						rs.LogEnd, rs.Available, rs.Err, rs.ReportedAt = &end, true, nil, time.Time{}
					}
				}
			}
		}
		capFollowers(&st)
		for _, rs := range st.Replicas {
			if rs.LogEnd != nil {
				ends[rs.BrokerID] = *rs.LogEnd
			}
		}
	}
	if leaderEnd, ok := ends[pm.Leader]; ok {
		for i := range st.Replicas {
			rs := &st.Replicas[i]
			if rs.LogEnd == nil {
				continue
			}
			if *rs.LogEnd > leaderEnd {
				rs.Err = fmt.Errorf("cluster: replica on broker %d holds %d records, more than leader's %d: %w", rs.BrokerID, *rs.LogEnd, leaderEnd, ErrReplicaDivergence)
				continue
			}
			lag := leaderEnd - *rs.LogEnd
			rs.Lag = &lag
		}
	}
	return st, nil
}

// defaultStatusWait bounds how long a partition's status waits for its
// leader's answer, unless MemberConfig.StatusWait says otherwise.
const defaultStatusWait = time.Second

// askWait bounds a question to another process's broker whose answer is
// wanted now or not at all — its log end, for a status or a high
// watermark: a broker that does not answer within it leaves what was
// known before.
func (c *Cluster) askWait() time.Duration { return min(c.statusWait, c.probeTimeout) }

// leaderBounds asks the partition's leader for its bounds: log start, log
// end, high watermark.
func (c *Cluster) leaderBounds(p *partition, pm PartitionMetadata) (RecordsResponse, error) {
	req := RecordsRequest{Topic: p.topic, Partition: p.index, Committed: true}
	if c.hosts(pm.Leader) {
		return c.readCommittedLocal(p, pm, req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.askWait())
	defer cancel()
	return c.transport.Records(ctx, pm.Leader, req)
}

// observeReplica fills in what is known of one replica: read here when
// this process hosts every broker, from the observer's reports otherwise.
func (c *Cluster) observeReplica(p *partition, rs *ReplicaStatus) {
	if c.observer == nil {
		b := c.broker(rs.BrokerID)
		rs.Available = b != nil && b.Available()
		if !rs.Available {
			return
		}
		l, err := b.replica(p.topic, p.index, false)
		if err != nil {
			rs.Err = err
			if unavailable(err) {
				rs.Available, rs.Err = false, nil
			}
			return
		}
		end := l.NextOffset()
		rs.LogEnd = &end
		return
	}
	rs.Available = c.observer.Broker(rs.BrokerID).Available
	rep, ok := c.observer.Replica(rs.BrokerID, p.topic, p.index)
	if !rs.Available || !ok {
		return
	}
	rs.ReportedAt = rep.At
	switch {
	case rep.Error != "":
		rs.Err = errors.New(rep.Error)
	default:
		rs.LogEnd = rep.LogEnd
	}
}

// capFollowers keeps an active follower's reported log end from passing
// its leader's. Each heartbeat is a snapshot of its own moment: a
// follower's report taken after a write can be newer than its leader's
// taken before it. An active follower takes only records its leader
// appended first (follower.go), so the lead is the reports' age, not
// records the leader lacks — for which the planner would deactivate it.
// Records a follower holds that its leader does not are cut at its proof
// at each epoch, and a disagreement is reported as Diverged.
func capFollowers(st *PartitionStatus) {
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
func statusOf(topicName string, pm PartitionMetadata) PartitionStatus {
	st := PartitionStatus{Topic: topicName, Partition: pm.Partition, Leader: pm.Leader, LeaderEpoch: pm.LeaderEpoch,
		Preferred: pm.Preferred(), Placement: slices.Clone(pm.Replicas), Followers: pm.Followers(), Assigned: pm.Assigned(),
		Active: slices.Clone(pm.Active)}
	for _, id := range pm.Assigned() {
		role := RoleFollower
		if id == pm.Leader {
			role = RoleLeader
		}
		st.Replicas = append(st.Replicas, ReplicaStatus{BrokerID: id, Role: role, Active: slices.Contains(pm.Active, id)})
	}
	return st
}
