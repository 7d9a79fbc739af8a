package cluster

import (
	"cmp"
	"fmt"
	"slices"
)

// ReplicaUsage is one replica in a broker's directory, as the broker's own
// log reads it.
type ReplicaUsage struct {
	Topic     string
	Partition int
	// Size is the bytes of the replica's segments (segment.Log.Size),
	// records below the log start still in the first segment included.
	Size int64
	// LogEnd is the offset the replica's next record would get.
	LogEnd uint64
	// Err is why the replica's log could not be read (missing, damaged);
	// Size and LogEnd are then zero.
	Err error
}

// BrokerUsage is what a broker of this process keeps in its directory:
// Kafka's log directory of one broker (DescribeLogDirs).
type BrokerUsage struct {
	BrokerID int
	// Dir is the broker's directory (BrokerDir), absolute: for the
	// server's log, never for a client.
	Dir string
	// Replicas are the replicas the metadata assigns to the broker, by
	// topic and partition.
	Replicas []ReplicaUsage
	// TotalBytes is the size of the file system that holds Dir and
	// UsableBytes what an unprivileged writer can still use of it; -1
	// when it cannot be read, as on a platform without statfs.
	TotalBytes, UsableBytes int64
}

// BrokerUsage reads broker id's replicas, which must run in this process
// (an error wrapping ErrBrokerUnavailable otherwise): of every topic when
// topics is nil, of those named otherwise, a name the metadata does not
// know left out. It only reads: a replica's log not opened yet is opened
// (never created), as a status opens it.
func (c *Cluster) BrokerUsage(id int, topics []string) (BrokerUsage, error) {
	m, err := c.hosted(id)
	if err != nil {
		return BrokerUsage{}, err
	}
	type key struct {
		topic     string
		partition int
	}
	var held []key
	c.store.Read(func(s *MetaState) {
		names := topics
		if names == nil {
			for name := range s.Meta.Topics {
				names = append(names, name)
			}
		}
		for _, name := range names {
			t, ok := s.Meta.Topics[name]
			if !ok {
				continue
			}
			for _, pm := range t.Partitions {
				if pm.assigned(id) {
					held = append(held, key{name, pm.Partition})
				}
			}
		}
	})
	slices.SortFunc(held, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	held = slices.Compact(held)
	u := BrokerUsage{BrokerID: id, Dir: m.b.Dir()}
	u.TotalBytes, u.UsableBytes = diskSpace(u.Dir)
	for _, k := range held {
		r := ReplicaUsage{Topic: k.topic, Partition: k.partition}
		l, err := m.b.replica(k.topic, k.partition, false)
		if err != nil {
			r.Err = fmt.Errorf("cluster: broker %d: replica of %s/%d: %w", id, k.topic, k.partition, err)
		} else {
			r.Size, r.LogEnd = l.Size(), l.NextOffset()
		}
		u.Replicas = append(u.Replicas, r)
	}
	return u, nil
}
