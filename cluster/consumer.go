package cluster

import (
	"context"
	"fmt"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// TopicSource is a client.Source: the phase-3 consumer reads a replicated
// partition through it unchanged.
var _ client.Source = (*TopicSource)(nil)

// OffsetStore returns the cluster's consumer offset store, rooted at
// OffsetsDir (<root>/offsets) and opened once per Cluster, so that every
// consumer of the cluster shares its per-file locks. In cluster mode the
// offsets are part of the replicated metadata, and there is no such store
// (ErrNoOffsetFiles): CommitOffset and LoadOffset reach them.
func (c *Cluster) OffsetStore() (*client.OffsetStore, error) {
	if c.files == nil {
		return nil, ErrNoOffsetFiles
	}
	return c.files.offsetStore()
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
	if err := c.offsetWithinHW("commit", consumerID, topicName, partition, offset); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	return c.store.CommitOffset(ctx, consumerID, topicName, partition, offset)
}

// ResetOffset is the operator's explicit reset of a consumer's offset on a
// replicated partition (client.OffsetStore.Reset: it may move backwards),
// refused like CommitOffset past the partition's high watermark with a
// *client.OffsetBeyondEndError, nothing written.
func (c *Cluster) ResetOffset(consumerID, topicName string, partition int, offset uint64) error {
	if err := c.offsetWithinHW("reset", consumerID, topicName, partition, offset); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	return c.store.ResetOffset(ctx, consumerID, topicName, partition, offset)
}

// offsetWithinHW validates an offset write (op "commit" or "reset") — the
// consumer id, then the topic and partition — and checks offset against the
// partition's high watermark. The watermark never moves back while the
// cluster is open, so an offset below it when checked is still below it
// when written.
func (c *Cluster) offsetWithinHW(op, consumerID, topicName string, partition int, offset uint64) error {
	if err := topic.ValidateName(consumerID); err != nil {
		return fmt.Errorf("cluster: %s offset: consumer id: %w", op, err)
	}
	hw, err := c.HighWatermark(topicName, partition)
	if err != nil {
		return err
	}
	if offset > hw {
		return &client.OffsetBeyondEndError{Op: op, ConsumerID: consumerID, Topic: topicName, Partition: partition, Requested: offset, End: hw}
	}
	return nil
}

// LoadOffset is a consumer's committed offset on a partition; ok is false
// when it never committed there. Like every read of offsets, it sees
// every commit acknowledged before it (offsetsCurrent).
func (c *Cluster) LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error) {
	if err := c.offsetsCurrent(); err != nil {
		return 0, false, err
	}
	return c.store.LoadOffset(consumerID, topicName, partition)
}

// ListOffsets is every offset a consumer committed, by topic and
// partition.
func (c *Cluster) ListOffsets(consumerID string) ([]client.CommittedOffset, error) {
	if err := c.offsetsCurrent(); err != nil {
		return nil, err
	}
	return c.store.ListOffsets(consumerID)
}

// ListAllOffsets is every offset every consumer committed.
func (c *Cluster) ListAllOffsets() ([]client.StoredOffset, error) {
	if err := c.offsetsCurrent(); err != nil {
		return nil, err
	}
	return c.store.ListAllOffsets()
}

// offsetsCurrent makes a read of committed offsets see every commit
// acknowledged before it. Commits are made by the controller's process
// (the groups' coordinator in cluster mode), answered once its copy of the
// metadata has applied them; another process's copy learns of them a
// few milliseconds later. So a process that does not run the controller
// asks the controller's how far its copy has come (OperateVersion) and
// waits until its own copy has come as far: one round trip, and a commit
// acknowledged through one node reads back through any other. In one
// process, and on the controller's, there is nothing to wait for. When
// the controller cannot be asked, the read fails (ErrNoController, or
// the transport's error) rather than answer what may be stale.
func (c *Cluster) offsetsCurrent() error {
	ctl, elsewhere, err := c.controllerElsewhere(byOperator)
	if err != nil || !elsewhere {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	res, err := c.transport.Operate(ctx, ctl, OperateRequest{Op: OperateVersion})
	if err != nil {
		return fmt.Errorf("cluster: read offsets: ask the controller how far the metadata has come: %w", err)
	}
	if err := c.store.AwaitVersion(ctx, res.Version); err != nil {
		return fmt.Errorf("cluster: read offsets: this process's copy of the metadata is behind the controller's: %w", err)
	}
	return nil
}

// DeleteOffsets deletes every committed offset of a consumer (a consumer
// group deleted) and returns how many there were: durable and all or
// nothing (client.OffsetStore.DeleteConsumer in one process). A consumer
// that never committed has none to delete.
func (c *Cluster) DeleteOffsets(consumerID string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	return c.store.DeleteOffsets(ctx, consumerID)
}

// DeleteOffset deletes a consumer's committed offset on one partition
// (Kafka's OffsetDelete) and reports whether there was one: durable
// before it returns (client.OffsetStore.DeleteOffset in one process, a
// command of the metadata group in a cluster of processes). The
// consumer's other offsets stay; a commit afterwards starts afresh.
func (c *Cluster) DeleteOffset(consumerID, topicName string, partition int) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	return c.store.DeleteOffset(ctx, consumerID, topicName, partition)
}
