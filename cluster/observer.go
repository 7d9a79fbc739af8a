package cluster

import "time"

// Observer tells a Cluster what it cannot see for itself: whether the
// brokers it does not host are up, and what they last reported of their
// replicas. In cluster mode these are the brokers' heartbeats, which the
// controller's process receives and every other process asks it for
// (server/clusternode), so that every process tells the same truth. A
// Cluster of one process hosts every broker and needs none. An Observer
// is safe for concurrent use.
type Observer interface {
	// Broker is what is known of broker id: whether it is up, and when it
	// was last heard from when it is not.
	Broker(id int) BrokerInfo
	// Replica is broker id's last report of its replica of a partition;
	// ok is false when there is none.
	Replica(id int, topicName string, partition int) (ReplicaReport, bool)
	// Controller is the broker whose process decides failovers: the one
	// whose knowledge of the brokers is first-hand. 0 when none is known.
	Controller() int
}

// ReplicaReport is one replica as its broker reported it.
type ReplicaReport struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// LogEnd is the replica's next offset; nil when the log cannot be
	// opened (Error says why).
	LogEnd *uint64 `json:"log_end,omitempty"`
	// HighWatermark is the high watermark the broker knows: its own as the
	// partition's leader, the leader's last word as a follower.
	HighWatermark uint64 `json:"high_watermark"`
	// Error says why the log cannot be read.
	Error string `json:"error,omitempty"`
	// At is when the report was made; the controller dates the reports it
	// keeps by their arrival, on its own clock.
	At time.Time `json:"at"`
}

// Reports describes every replica hosted broker id holds of the topics the
// metadata assigns it: its log end (or why it cannot be read), the high
// watermark it knows. A process of cluster mode
// sends them in its heartbeats.
func (c *Cluster) Reports(id int) []ReplicaReport {
	m, err := c.hosted(id)
	if err != nil {
		return nil
	}
	var keys []replicaKey
	c.store.Read(func(s *MetaState) {
		for name, t := range s.Meta.Topics {
			for _, pm := range t.Partitions {
				if pm.assigned(id) {
					keys = append(keys, replicaKey{name, pm.Partition})
				}
			}
		}
	})
	now := c.now()
	out := make([]ReplicaReport, 0, len(keys))
	for _, k := range keys {
		out = append(out, c.report(m, k, now))
	}
	return out
}

// report is member m's report of one replica.
func (c *Cluster) report(m *member, k replicaKey, now time.Time) ReplicaReport {
	rep := ReplicaReport{Topic: k.topic, Partition: k.partition, At: now}
	l, err := m.b.replica(k.topic, k.partition, c.createMissing)
	if err != nil {
		rep.Error = c.relative(err.Error())
	} else {
		end := l.NextOffset()
		rep.LogEnd = &end
	}
	r := m.replica(k)
	rep.HighWatermark = r.hw.Load()
	if p, err := c.partition(k.topic, k.partition); err == nil {
		rep.HighWatermark = max(rep.HighWatermark, p.hw.Load())
	}
	return rep
}
