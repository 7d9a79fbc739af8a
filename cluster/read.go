package cluster

import (
	"fmt"

	"github.com/pystream/pystream/log"
)

// ReadCommitted returns up to maxRecords records of a partition from start,
// read from the current leader and never past the high watermark: a
// consumer served this way never sees a record that a failover could
// discard. Past the high watermark it returns no records and no error. An
// unavailable leader is a *LeaderUnavailableError.
func (c *Cluster) ReadCommitted(topicName string, partition int, start uint64, maxRecords int) ([]log.Record, error) {
	if maxRecords < 1 {
		return nil, fmt.Errorf("cluster: read %s/%d: maxRecords %d < 1: %w", topicName, partition, maxRecords, ErrInvalidArgument)
	}
	p, err := c.partition(topicName, partition)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if err := p.goneLocked(); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	hw := c.refreshHWLocked(p)
	ll, err := c.leaderLogLocked(p)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if start >= hw {
		return nil, nil
	}
	recs, err := ll.Read(start, int(min(uint64(maxRecords), hw-start)))
	if err != nil {
		if gone := c.gone(p); gone != nil {
			return nil, gone // deleted during the read, which closed the log
		}
		return nil, fmt.Errorf("cluster: read %s/%d: %w", topicName, partition, err)
	}
	return recs, nil
}

// HighWatermark returns a partition's high watermark.
func (c *Cluster) HighWatermark(topicName string, partition int) (uint64, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.goneLocked(); err != nil {
		return 0, err
	}
	return c.refreshHWLocked(p), nil
}

// TopicSource serves a replicated topic to readers: Read is ReadCommitted.
// It has the method set of client.Source, so the phase-3 consumer reads a
// replicated partition unchanged. It is safe for concurrent use.
type TopicSource struct {
	c          *Cluster
	name       string
	partitions int
}

// Source returns a reader of one topic through its leaders, up to the high
// watermark.
func (c *Cluster) Source(topicName string) (*TopicSource, error) {
	t, err := c.topic(topicName)
	if err != nil {
		return nil, err
	}
	return &TopicSource{c: c, name: t.name, partitions: len(t.parts)}, nil
}

// Name is the topic's name.
func (s *TopicSource) Name() string { return s.name }

// PartitionCount is the topic's partition count.
func (s *TopicSource) PartitionCount() int { return s.partitions }

// NextOffset is the partition's high watermark: the end of what Read
// serves, and the largest offset a consumer may commit.
func (s *TopicSource) NextOffset(partition int) (uint64, error) {
	return s.c.HighWatermark(s.name, partition)
}

// Read is Cluster.ReadCommitted on this topic.
func (s *TopicSource) Read(partition int, start uint64, maxRecords int) ([]log.Record, error) {
	return s.c.ReadCommitted(s.name, partition, start, maxRecords)
}
