package client

import (
	"errors"
	"fmt"

	"github.com/pystream/pystream/log/segment"
)

// OffsetReset is a consumer's policy for a position below the partition's
// log start, Kafka's auto.offset.reset. It applies only there: a position
// at or past the end yields empty fetches, as it always has.
type OffsetReset string

// The reset policies.
const (
	// OffsetResetEarliest moves the position to the log start: the oldest
	// record still readable. The empty OffsetReset means this.
	OffsetResetEarliest OffsetReset = "earliest"
	// OffsetResetLatest moves the position to the end (Source.NextOffset):
	// only records written afterwards are read.
	OffsetResetLatest OffsetReset = "latest"
	// OffsetResetNone moves nothing: Fetch returns the
	// *OffsetOutOfRangeError and the caller decides (Seek, then Fetch).
	OffsetResetNone OffsetReset = "none"
)

// ParseOffsetReset reads "earliest", "latest" or "none"; anything else is
// an error wrapping ErrInvalidConfig.
func ParseOffsetReset(s string) (OffsetReset, error) {
	switch r := OffsetReset(s); r {
	case OffsetResetEarliest, OffsetResetLatest, OffsetResetNone:
		return r, nil
	}
	return "", fmt.Errorf("client: offset reset %q: want earliest, latest or none: %w", s, ErrInvalidConfig)
}

// OffsetResetEvent reports one reset of a consumer's position: the records
// [From, LogStart) were deleted before the consumer read them, and with
// OffsetResetLatest the records [LogStart, To) are skipped too.
type OffsetResetEvent struct {
	// Topic and Partition name the partition.
	Topic     string
	Partition int
	// Policy is the policy applied, never OffsetResetNone.
	Policy OffsetReset
	// From is the position that could not be read; To is the new one.
	From, To uint64
	// LogStart is the partition's log start when the reset was decided;
	// LogStart - From records were deleted unread.
	LogStart uint64
}

// maxResets bounds the resets of one Fetch: retention may raise the log
// start again between a reset and the read that follows.
const maxResets = 3

// outOfRange reports whether err is a read below the log start, of either
// kind of Source, and the log start the error names (0 when it names
// none).
func outOfRange(err error) (logStart uint64, ok bool) {
	var oor *OffsetOutOfRangeError
	if errors.As(err, &oor) {
		return oor.LogStart, true
	}
	return 0, errors.Is(err, segment.ErrBeforeLogStart)
}

// outOfRangeError is err as an *OffsetOutOfRangeError: as it is from a
// replicated topic, built from the Source's bounds for a topic's
// segment.ErrBeforeLogStart.
func (c *Consumer) outOfRangeError(err error) error {
	var oor *OffsetOutOfRangeError
	if errors.As(err, &oor) {
		return oor
	}
	e := &OffsetOutOfRangeError{Topic: c.src.Name(), Partition: c.partition, Offset: c.position}
	var lerr, herr error
	e.LogStart, lerr = c.src.LogStart(c.partition)
	e.HighWatermark, herr = c.src.NextOffset(c.partition)
	if lerr != nil || herr != nil {
		return err // the bounds cannot be read: the original error says more
	}
	return e
}

// reset applies the consumer's policy to a read below the log start
// (logStart as the error named it, 0 when unknown) and reports it.
func (c *Consumer) reset(logStart uint64) error {
	if ls, err := c.src.LogStart(c.partition); err != nil {
		return err
	} else if ls > logStart {
		logStart = ls
	}
	ev := OffsetResetEvent{Topic: c.src.Name(), Partition: c.partition, Policy: c.policy, From: c.position, LogStart: logStart, To: logStart}
	if c.policy == OffsetResetLatest {
		end, err := c.src.NextOffset(c.partition)
		if err != nil {
			return err
		}
		ev.To = max(end, logStart)
	}
	c.position = ev.To
	c.lastReset, c.hasReset = ev, true
	if c.onReset != nil {
		c.onReset(ev)
	}
	return nil
}

// LastReset is the latest reset of the position by the consumer's
// OffsetReset policy; ok is false when there was none.
func (c *Consumer) LastReset() (ev OffsetResetEvent, ok bool) {
	return c.lastReset, c.hasReset
}
