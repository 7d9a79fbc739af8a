package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// ReadCommitted returns up to maxRecords records of a partition from start,
// read from the current leader and never past the high watermark: a
// consumer served this way never sees a record that a failover could
// discard. Past the high watermark it returns no records and no error;
// below the leader's log start it is a *client.OffsetOutOfRangeError. An
// unavailable leader is a *LeaderUnavailableError. A leader in another
// process (cluster mode) is asked for the records.
func (c *Cluster) ReadCommitted(topicName string, partition int, start uint64, maxRecords int) ([]log.Record, error) {
	if maxRecords < 1 {
		return nil, fmt.Errorf("cluster: read %s/%d: maxRecords %d < 1: %w", topicName, partition, maxRecords, ErrInvalidArgument)
	}
	res, err := c.readCommitted(RecordsRequest{Topic: topicName, Partition: partition, From: start, MaxRecords: maxRecords,
		MaxBytes: math.MaxInt, Committed: true})
	return res.Records, err
}

// readCommitted serves a committed read where the leader is: here, or in
// the leader's process. A leader in another process is asked for at most
// maxPushBytes of records.
func (c *Cluster) readCommitted(req RecordsRequest) (RecordsResponse, error) {
	p, err := c.partition(req.Topic, req.Partition)
	if err != nil {
		return RecordsResponse{}, err
	}
	for attempt := 0; ; attempt++ {
		pm, err := c.partitionMeta(p)
		if err != nil {
			return RecordsResponse{}, err
		}
		if c.hosts(pm.Leader) {
			return c.readCommittedLocal(p, pm, req)
		}
		remote := req
		remote.MaxBytes = min(req.MaxBytes, maxPushBytes)
		ctx, cancel := c.untilLeaderMoves(p, pm, c.requestTimeout)
		res, err := c.transport.Records(ctx, pm.Leader, remote)
		cancel()
		// A read changes nothing: one that failed because the leader
		// moved meanwhile (a failover applied here while the old leader
		// did not answer) is asked again of the new one.
		moved := err != nil && c.leaderMoved(p, pm)
		if err == nil || attempt >= 3 || !errors.Is(err, ErrNotLeader) && !moved {
			return res, c.leaderAnswer(p, pm.Leader, err)
		}
		c.awaitChange(p, pm, 500*time.Millisecond)
	}
}

// leaderAnswer turns a failure to reach a partition's leader in another
// process into the *LeaderUnavailableError a stopped leader is; the
// leader's own answers (an offset out of range, a refusal) pass unchanged.
func (c *Cluster) leaderAnswer(p *partition, leader int, err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	var lu *LeaderUnavailableError
	if errors.As(err, &lu) {
		return err
	}
	return &LeaderUnavailableError{Topic: p.topic, Partition: p.index, BrokerID: leader, Err: err}
}

// readCommittedAt serves a committed read sent to broker m, which must
// lead the partition.
func (c *Cluster) readCommittedAt(m *member, req RecordsRequest) (RecordsResponse, error) {
	p, err := c.partition(req.Topic, req.Partition)
	if err != nil {
		return RecordsResponse{}, err
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return RecordsResponse{}, err
	}
	if pm.Leader != m.id() {
		return RecordsResponse{}, &NotLeaderError{Topic: p.topic, Partition: p.index, Broker: m.id(), Leader: pm.Leader}
	}
	return c.readCommittedLocal(p, pm, req)
}

// readCommittedLocal reads below the high watermark from the leader's log,
// which this process hosts.
func (c *Cluster) readCommittedLocal(p *partition, pm PartitionMetadata, req RecordsRequest) (RecordsResponse, error) {
	if err := p.goneLocked(); err != nil {
		return RecordsResponse{}, err
	}
	hw := c.refreshHW(p)
	m, ll, err := c.leaderLog(p, pm)
	if err != nil {
		return RecordsResponse{}, err
	}
	ls := ll.LogStart()
	res := RecordsResponse{LogStart: min(ls, hw), LogEnd: ll.NextOffset(), HighWatermark: hw}
	upto := hw
	if req.Stable {
		// A read_committed reader stops at the last stable offset
		// (markers.go).
		if res.LastStable, _, err = c.lastStableLocal(m, p, pm, hw, 0, 0); err != nil {
			return RecordsResponse{}, err
		}
		upto = res.LastStable
	}
	if req.From >= upto || req.MaxBytes <= 0 {
		return res, nil
	}
	if req.From < ls {
		return RecordsResponse{}, &client.OffsetOutOfRangeError{Topic: p.topic, Partition: p.index, Offset: req.From, LogStart: ls, HighWatermark: hw}
	}
	res.Records, err = readRange(ll, req.From, upto, req.MaxBytes, req.MaxRecords)
	if err == nil && req.Stable {
		err = c.abortedAmong(m, p, pm, req, &res)
	}
	if err != nil {
		if gone := c.gone(p); gone != nil {
			return RecordsResponse{}, gone // deleted during the read, which closed the log
		}
		if errors.Is(err, segment.ErrBeforeLogStart) { // retention ran meanwhile
			return RecordsResponse{}, &client.OffsetOutOfRangeError{Topic: p.topic, Partition: p.index, Offset: req.From, LogStart: ll.LogStart(), HighWatermark: hw}
		}
		return RecordsResponse{}, fmt.Errorf("cluster: read %s/%d: %w", p.topic, p.index, err)
	}
	return res, nil
}

// Bounds returns the range of a partition that reads serve: its leader's
// log start and its high watermark. An unavailable leader is a
// *LeaderUnavailableError.
func (c *Cluster) Bounds(topicName string, partition int) (logStart, highWatermark uint64, err error) {
	res, err := c.readCommitted(RecordsRequest{Topic: topicName, Partition: partition, Committed: true})
	return res.LogStart, res.HighWatermark, err
}

// HighWatermark returns a partition's high watermark, as its leader knows
// it.
func (c *Cluster) HighWatermark(topicName string, partition int) (uint64, error) {
	p, err := c.partition(topicName, partition)
	if err != nil {
		return 0, err
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return 0, err
	}
	if c.hosts(pm.Leader) {
		return c.refreshHW(p), nil
	}
	res, err := c.readCommitted(RecordsRequest{Topic: topicName, Partition: partition, Committed: true})
	return res.HighWatermark, err
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
	pm, err := c.partitionMeta(p)
	if err != nil {
		return 0, false, err
	}
	req := OffsetForTimeRequest{Topic: topicName, Partition: partition, Timestamp: ts}
	if c.hosts(pm.Leader) {
		res, err := c.offsetForTimeLocal(p, pm, req)
		return res.Offset, res.Found, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	res, err := c.transport.OffsetForTime(ctx, pm.Leader, req)
	return res.Offset, res.Found, c.leaderAnswer(p, pm.Leader, err)
}

// OffsetForTimeAt serves OffsetForTime on broker to, hosted here, which
// must lead the partition (what Transport.OffsetForTime carries).
func (c *Cluster) OffsetForTimeAt(ctx context.Context, to int, req OffsetForTimeRequest) (OffsetForTimeResponse, error) {
	m, err := c.hosted(to)
	if err != nil {
		return OffsetForTimeResponse{}, err
	}
	p, err := c.partition(req.Topic, req.Partition)
	if err != nil {
		return OffsetForTimeResponse{}, err
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return OffsetForTimeResponse{}, err
	}
	if pm.Leader != m.id() {
		return OffsetForTimeResponse{}, &NotLeaderError{Topic: p.topic, Partition: p.index, Broker: m.id(), Leader: pm.Leader}
	}
	return c.offsetForTimeLocal(p, pm, req)
}

func (c *Cluster) offsetForTimeLocal(p *partition, pm PartitionMetadata, req OffsetForTimeRequest) (OffsetForTimeResponse, error) {
	if err := p.goneLocked(); err != nil {
		return OffsetForTimeResponse{}, err
	}
	hw := c.refreshHW(p)
	_, ll, err := c.leaderLog(p, pm)
	if err != nil {
		return OffsetForTimeResponse{}, err
	}
	off, found, err := ll.OffsetForTime(req.Timestamp)
	if err != nil {
		return OffsetForTimeResponse{}, fmt.Errorf("cluster: offset for time in %s/%d: %w", p.topic, p.index, err)
	}
	if !found || off >= hw {
		return OffsetForTimeResponse{Offset: hw}, nil
	}
	// A retention pass may have run since the search: never answer an
	// offset below what is readable now.
	return OffsetForTimeResponse{Offset: max(off, ll.LogStart()), Found: true}, nil
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
