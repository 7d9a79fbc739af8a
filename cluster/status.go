package cluster

import (
	"fmt"
	"slices"
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
// nothing is repaired and no replica set changes.
func (c *Cluster) Status(topicName string, partition int) (PartitionStatus, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return PartitionStatus{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.goneLocked(); err != nil {
		return PartitionStatus{}, err
	}
	pm := p.metadataLocked()
	st := PartitionStatus{Topic: p.topic, Partition: p.index, Leader: pm.Leader, LeaderEpoch: pm.LeaderEpoch,
		Preferred: pm.Preferred(), Placement: pm.Replicas, Followers: pm.Followers(),
		Assigned: pm.Assigned(), Active: pm.Active, HighWatermark: c.refreshHWLocked(p)}
	ends := map[int]uint64{}
	for _, id := range st.Assigned {
		rs := ReplicaStatus{BrokerID: id, Role: RoleFollower, Active: slices.Contains(pm.Active, id)}
		if id == pm.Leader {
			rs.Role = RoleLeader
		}
		b := c.broker(id)
		rs.Available = b != nil && b.Available()
		if rs.Available {
			l, err := b.replica(p.topic, p.index, false)
			if err != nil {
				rs.Err = err
				if unavailable(err) {
					rs.Available, rs.Err = false, nil
				}
			} else {
				end := l.NextOffset()
				rs.LogEnd = &end
				ends[id] = end
			}
		}
		st.Replicas = append(st.Replicas, rs)
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
