package cluster

import (
	"errors"
	"fmt"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log/segment"

	"github.com/pystream/pystream/log"
)

// ReadCommitted returns up to maxRecords records of a partition from start,
// read from the current leader and never past the high watermark: a
// consumer served this way never sees a record that a failover could
// discard. Past the high watermark it returns no records and no error;
// below the leader's log start it is a *client.OffsetOutOfRangeError. An
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
	if ls := ll.LogStart(); start < ls {
		return nil, &client.OffsetOutOfRangeError{Topic: topicName, Partition: partition, Offset: start, LogStart: ls, HighWatermark: hw}
	}
	recs, err := ll.Read(start, int(min(uint64(maxRecords), hw-start)))
	if err != nil {
		if gone := c.gone(p); gone != nil {
			return nil, gone // deleted during the read, which closed the log
		}
		if errors.Is(err, segment.ErrBeforeLogStart) { // retention ran meanwhile
			return nil, &client.OffsetOutOfRangeError{Topic: topicName, Partition: partition, Offset: start, LogStart: ll.LogStart(), HighWatermark: hw}
		}
		return nil, fmt.Errorf("cluster: read %s/%d: %w", topicName, partition, err)
	}
	return recs, nil
}

// Bounds returns the range of a partition that reads serve: its leader's
// log start and its high watermark. An unavailable leader is a
// *LeaderUnavailableError.
func (c *Cluster) Bounds(topicName string, partition int) (logStart, highWatermark uint64, err error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return 0, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.goneLocked(); err != nil {
		return 0, 0, err
	}
	hw := c.refreshHWLocked(p)
	ll, err := c.leaderLogLocked(p)
	if err != nil {
		return 0, 0, err
	}
	return min(ll.LogStart(), hw), hw, nil
}

// OffsetForTime returns the first offset of a partition whose record's
// timestamp (nanoseconds since the epoch) is at or after ts, searched on
// the leader by the largest timestamp so far as Kafka does, so a clock
// that stepped back cannot hide a later record. found is false when no
// record below the high watermark qualifies: a reader starting at the high
// watermark then sees only records written after the call.
func (c *Cluster) OffsetForTime(topicName string, partition int, ts int64) (offset uint64, found bool, err error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return 0, false, err
	}
	p.mu.Lock()
	if err := p.goneLocked(); err != nil {
		p.mu.Unlock()
		return 0, false, err
	}
	hw := c.refreshHWLocked(p)
	ll, err := c.leaderLogLocked(p)
	p.mu.Unlock()
	if err != nil {
		return 0, false, err
	}
	off, found, err := ll.OffsetForTime(ts)
	if err != nil {
		return 0, false, fmt.Errorf("cluster: offset for time in %s/%d: %w", topicName, partition, err)
	}
	if !found || off >= hw {
		return hw, false, nil
	}
	// A retention pass may have run since the search: never answer an
	// offset below what is readable now.
	return max(off, ll.LogStart()), true, nil
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

// LogStart is the partition's first readable offset (Cluster.Bounds).
func (s *TopicSource) LogStart(partition int) (uint64, error) {
	start, _, err := s.c.Bounds(s.name, partition)
	return start, err
}

// Read is Cluster.ReadCommitted on this topic.
func (s *TopicSource) Read(partition int, start uint64, maxRecords int) ([]log.Record, error) {
	return s.c.ReadCommitted(s.name, partition, start, maxRecords)
}
