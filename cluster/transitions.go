package cluster

import (
	"fmt"
	"maps"
	"slices"

	"github.com/pystream/pystream/topic"
)

// This file holds the rules that turn one partition's leadership into the
// next, and a topic's placement into its first metadata. The in-process
// Cluster and the replicated metadata (MetaState) both change leadership
// through them, so the two modes cannot disagree on what a failover or a
// recovery writes.

// NewTopicMetadata is a new topic's metadata: the placement over brokers
// (Placement), each partition led by its preferred replica at epoch 0 with
// every replica active.
func NewTopicMetadata(brokers []int, partitions, replicationFactor int) (TopicMetadata, error) {
	if partitions < 1 {
		return TopicMetadata{}, fmt.Errorf("cluster: %d partitions: %w", partitions, ErrInvalidPartitionCount)
	}
	if replicationFactor < 1 || replicationFactor > len(brokers) {
		return TopicMetadata{}, fmt.Errorf("cluster: replication factor %d with %d broker(s): %w", replicationFactor, len(brokers), ErrInvalidReplicationFactor)
	}
	placement, err := Placement(brokers, partitions, replicationFactor)
	if err != nil {
		return TopicMetadata{}, err
	}
	tm := TopicMetadata{PartitionCount: partitions, ReplicationFactor: replicationFactor}
	for p, a := range placement {
		replicas := append([]int{a.Leader}, a.Followers...)
		pm := PartitionMetadata{Partition: p, Leader: a.Leader, Replicas: replicas}
		pm.Active = pm.Assigned()
		tm.Partitions = append(tm.Partitions, pm)
	}
	return tm, nil
}

// GrownTopicMetadata is tm grown to partitions partitions: its partitions
// as they are, followed by the new ones placed as a creation places them —
// partition p of the new ones gets Placement(brokers, partitions, rf)[p],
// led by its preferred replica at epoch 0 with every replica active. A
// count not larger than tm's (a topic's partitions are only ever added
// to: keyed records would route elsewhere, and a partition's records
// cannot be taken away) or past topic.MaxPartitionCount is
// ErrInvalidPartitionCount.
func GrownTopicMetadata(tm TopicMetadata, brokers []int, partitions int) (TopicMetadata, error) {
	have := len(tm.Partitions)
	if partitions <= have {
		return TopicMetadata{}, fmt.Errorf("cluster: the topic has %d partition(s) and a topic's partitions can only be added to: give more than %d: %w", have, have, ErrInvalidPartitionCount)
	}
	if partitions > topic.MaxPartitionCount {
		return TopicMetadata{}, fmt.Errorf("cluster: %d partitions, want at most %d: %w", partitions, topic.MaxPartitionCount, ErrInvalidPartitionCount)
	}
	whole, err := NewTopicMetadata(brokers, partitions, tm.ReplicationFactor)
	if err != nil {
		return TopicMetadata{}, err
	}
	next := tm
	next.Config = maps.Clone(tm.Config)
	next.Partitions = make([]PartitionMetadata, 0, partitions)
	for _, pm := range tm.Partitions {
		next.Partitions = append(next.Partitions, pm.clone())
	}
	next.Partitions = append(next.Partitions, whole.Partitions[have:]...)
	next.PartitionCount = partitions
	return next, nil
}

// withLeader is p led by id at the next epoch, with the replicas in leave
// out of the active set: a failover (leave holds the failed leader) or a
// leader move (leave empty).
func (p PartitionMetadata) withLeader(id int, leave []int) PartitionMetadata {
	next := p.clone()
	next.Leader, next.LeaderEpoch = id, p.LeaderEpoch+1
	next.Active = slices.DeleteFunc(next.Active, func(a int) bool { return slices.Contains(leave, a) })
	return next
}

// withoutActive is p with follower id out of the active set.
func (p PartitionMetadata) withoutActive(id int) PartitionMetadata {
	next := p.clone()
	next.Active = slices.DeleteFunc(next.Active, func(a int) bool { return a == id })
	return next
}

// withActive is p with follower id back in the active set.
func (p PartitionMetadata) withActive(id int) PartitionMetadata {
	next := p.clone()
	if !slices.Contains(next.Active, id) {
		next.Active = append(next.Active, id)
		slices.Sort(next.Active)
	}
	return next
}
