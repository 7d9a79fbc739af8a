package client

import (
	"fmt"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// Consumer reads one explicitly assigned partition of a topic and keeps two
// offsets apart:
//
//   - the position, in memory: the next offset Fetch returns. Fetch
//     advances it; Seek moves it anywhere.
//   - the committed offset, on disk in the OffsetStore: where a new
//     consumer with the same id starts. Only Commit changes it, and never
//     backwards.
//
// The intended cycle is Fetch, process, Commit: a consumer that stops before
// committing is restarted from the old committed offset and sees those
// records again (at-least-once delivery). Nothing is committed
// automatically.
//
// A Consumer is NOT safe for concurrent use: use each one from one
// goroutine. Different consumers may share a Source and an OffsetStore.
type Consumer struct {
	id        string
	src       Source
	partition int
	offsets   *OffsetStore

	position     uint64
	committed    uint64
	hasCommitted bool

	policy    OffsetReset
	onReset   func(OffsetResetEvent)
	lastReset OffsetResetEvent
	hasReset  bool
}

// NewConsumer validates cfg and returns a consumer positioned at its
// committed offset, or at 0 when it never committed. The id and the topic
// name must pass topic.ValidateName; the partition must exist. A damaged
// offset file returns its *OffsetCorruptionError.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if cfg.Topic == nil || cfg.Offsets == nil {
		return nil, fmt.Errorf("client: new consumer %q: Topic and Offsets are required: %w", cfg.ID, ErrInvalidConfig)
	}
	if err := topic.ValidateName(cfg.ID); err != nil {
		return nil, fmt.Errorf("client: new consumer: id: %w", err)
	}
	policy := cfg.OffsetReset
	if policy == "" {
		policy = OffsetResetEarliest
	}
	if _, err := ParseOffsetReset(string(policy)); err != nil {
		return nil, fmt.Errorf("client: new consumer %q: %w", cfg.ID, err)
	}
	name := cfg.Topic.Name()
	if n := cfg.Topic.PartitionCount(); cfg.Partition < 0 || cfg.Partition >= n {
		return nil, fmt.Errorf("client: new consumer %q: topic %q partition %d of %d: %w", cfg.ID, name, cfg.Partition, n, topic.ErrPartitionOutOfRange)
	}
	off, ok, err := cfg.Offsets.Load(cfg.ID, name, cfg.Partition)
	if err != nil {
		return nil, fmt.Errorf("client: new consumer %q: %w", cfg.ID, err)
	}
	return &Consumer{
		id:           cfg.ID,
		src:          cfg.Topic,
		partition:    cfg.Partition,
		offsets:      cfg.Offsets,
		position:     off,
		committed:    off,
		hasCommitted: ok,
		policy:       policy,
		onReset:      cfg.OnReset,
	}, nil
}

// ID is the consumer id, its durable progress identity (not a group id).
func (c *Consumer) ID() string { return c.id }

// Topic is the name of the consumed topic.
func (c *Consumer) Topic() string { return c.src.Name() }

// Partition is the consumed partition.
func (c *Consumer) Partition() int { return c.partition }

// Fetch returns up to maxRecords records from the position on and moves the
// position past the last one returned. At or past the end of the partition
// it returns no records and leaves the position alone. It never commits.
//
// Below the partition's log start the consumer's OffsetReset decides:
// earliest and latest move the position (reported to OnReset and by
// LastReset) and read from there; none returns a wrapped
// *OffsetOutOfRangeError and leaves the position alone.
func (c *Consumer) Fetch(maxRecords int) ([]log.Record, error) {
	recs, err := c.src.Read(c.partition, c.position, maxRecords)
	for resets := 0; err != nil; resets++ {
		logStart, ok := outOfRange(err)
		if !ok || c.policy == OffsetResetNone || resets == maxResets {
			if ok {
				err = c.outOfRangeError(err)
			}
			return nil, fmt.Errorf("client: consumer %q fetch %s/%d at %d: %w", c.id, c.src.Name(), c.partition, c.position, err)
		}
		if err := c.reset(logStart); err != nil {
			return nil, fmt.Errorf("client: consumer %q reset %s/%d from %d: %w", c.id, c.src.Name(), c.partition, c.position, err)
		}
		recs, err = c.src.Read(c.partition, c.position, maxRecords)
	}
	if len(recs) > 0 {
		c.position = recs[len(recs)-1].Offset + 1
	}
	return recs, nil
}

// Commit makes the position the durable committed offset. It is a no-op
// when the position equals the committed offset. A position below the
// offset on disk (after a Seek back, or because another consumer with the
// same id committed further) returns an *OffsetRegressionError and changes
// nothing. A position past the partition's end (Source.NextOffset: after a
// Seek past it) returns an *OffsetBeyondEndError and changes nothing: no
// record there has been read, and a restart from it would skip every record
// written up to it. An error of Source.NextOffset (a closed topic, say) is
// returned wrapped, and nothing is written either.
func (c *Consumer) Commit() error {
	if c.hasCommitted && c.position == c.committed {
		return nil
	}
	end, err := c.src.NextOffset(c.partition)
	if err != nil {
		return fmt.Errorf("client: consumer %q commit %s/%d: %w", c.id, c.src.Name(), c.partition, err)
	}
	if c.position > end {
		return &OffsetBeyondEndError{Op: "commit", ConsumerID: c.id, Topic: c.src.Name(), Partition: c.partition, Requested: c.position, End: end}
	}
	if err := c.offsets.Commit(c.id, c.src.Name(), c.partition, c.position); err != nil {
		return err
	}
	c.committed, c.hasCommitted = c.position, true
	return nil
}

// Seek moves the position to offset and nothing else: the committed offset
// is untouched. Seeking past the end is allowed and yields empty fetches;
// committing there is refused (*OffsetBeyondEndError) until the partition
// has grown that far.
func (c *Consumer) Seek(offset uint64) { c.position = offset }

// Position is the next offset Fetch will return.
func (c *Consumer) Position() uint64 { return c.position }

// Committed is the committed offset as this consumer knows it; ok is false
// when it has never been committed (different from a committed 0).
func (c *Consumer) Committed() (offset uint64, ok bool) {
	return c.committed, c.hasCommitted
}
