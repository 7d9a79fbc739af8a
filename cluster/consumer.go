package cluster

import (
	"fmt"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
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

// CommitOffset is the phase-3 commit of a consumer's offset on a replicated
// partition, for callers that hold no Consumer (the HTTP API): durable,
// never backwards (*client.OffsetRegressionError), and never past the
// partition's high watermark: a larger offset is a
// *client.OffsetBeyondEndError and nothing is written. The topic and
// partition must exist.
func (c *Cluster) CommitOffset(consumerID, topicName string, partition int, offset uint64) error {
	store, err := c.offsetWithinHW("commit", consumerID, topicName, partition, offset)
	if err != nil {
		return err
	}
	return store.Commit(consumerID, topicName, partition, offset)
}

// ResetOffset is the operator's explicit reset of a consumer's offset on a
// replicated partition (client.OffsetStore.Reset: it may move backwards),
// refused like CommitOffset past the partition's high watermark with a
// *client.OffsetBeyondEndError, nothing written.
func (c *Cluster) ResetOffset(consumerID, topicName string, partition int, offset uint64) error {
	store, err := c.offsetWithinHW("reset", consumerID, topicName, partition, offset)
	if err != nil {
		return err
	}
	return store.Reset(consumerID, topicName, partition, offset)
}

// offsetWithinHW validates an offset write (op "commit" or "reset") — the
// consumer id, then the topic and partition — and checks offset against the
// partition's high watermark, returning the offset store to write to. The
// watermark never moves back while the cluster is open, so an offset below
// it when checked is still below it when written.
func (c *Cluster) offsetWithinHW(op, consumerID, topicName string, partition int, offset uint64) (*client.OffsetStore, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return nil, fmt.Errorf("cluster: %s offset: consumer id: %w", op, err)
	}
	hw, err := c.HighWatermark(topicName, partition)
	if err != nil {
		return nil, err
	}
	if offset > hw {
		return nil, &client.OffsetBeyondEndError{Op: op, ConsumerID: consumerID, Topic: topicName, Partition: partition, Requested: offset, End: hw}
	}
	return c.OffsetStore()
}

// DeleteOffsets deletes every committed offset of a consumer (a consumer
// group deleted) and returns how many there were:
// client.OffsetStore.DeleteConsumer, durable and all or nothing. A
// consumer that never committed has none to delete.
func (c *Cluster) DeleteOffsets(consumerID string) (int, error) {
	store, err := c.OffsetStore()
	if err != nil {
		return 0, err
	}
	return store.DeleteConsumer(consumerID)
}
