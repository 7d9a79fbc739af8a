package cluster

import (
	"fmt"

	"github.com/pystream/pystream/client"
)

// TopicSource is a client.Source: the phase-3 consumer reads a replicated
// partition through it unchanged.
var _ client.Source = (*TopicSource)(nil)

// OffsetStore returns the cluster's consumer offset store, rooted at
// OffsetsDir (<root>/offsets) and opened once per Cluster, so that every
// consumer of the cluster shares its per-file locks.
func (c *Cluster) OffsetStore() (*client.OffsetStore, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.offsets == nil {
		s, err := client.OpenOffsetStoreWithOptions(c.OffsetsDir(), client.OffsetStoreOptions{FS: c.opts.FS})
		if err != nil {
			return nil, fmt.Errorf("cluster: open offset store: %w", err)
		}
		c.offsets = s
	}
	return c.offsets, nil
}

// NewConsumer returns a phase-3 consumer of one partition of a replicated
// topic, with exactly the phase-3 semantics — an in-memory position,
// explicit commits into the cluster's offset store, seek — reading from the
// partition's current leader and never past its high watermark. After a
// failover it simply reads from the new leader.
func (c *Cluster) NewConsumer(consumerID, topicName string, partition int) (*client.Consumer, error) {
	src, err := c.Source(topicName)
	if err != nil {
		return nil, err
	}
	store, err := c.OffsetStore()
	if err != nil {
		return nil, err
	}
	return client.NewConsumer(client.ConsumerConfig{ID: consumerID, Topic: src, Partition: partition, Offsets: store})
}
