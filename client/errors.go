package client

import (
	"errors"
	"fmt"
)

// Sentinel errors; check them with errors.Is. Errors of the topic and log
// below (topic.ErrInvalidName, topic.ErrPartitionOutOfRange, log.ErrClosed,
// ...) are passed through wrapped.
var (
	// ErrInvalidConfig is returned for a missing Source, Sink or
	// OffsetStore.
	ErrInvalidConfig = errors.New("client: invalid configuration")
	// ErrStoreFailed is returned by every Commit and Reset of a consumer
	// after a commit's or reset's write for that consumer failed. The store
	// refuses the consumer's writes until it is reopened,
	// because after a failed fsync nothing is known about what reached the
	// disk. Loads keep working.
	ErrStoreFailed = errors.New("client: offset store failed by an earlier write error; reopen to continue")
	// ErrOffsetBeyondEnd is matched by *OffsetBeyondEndError.
	ErrOffsetBeyondEnd = errors.New("client: offset past the end of the partition")
	// ErrOffsetOutOfRange is matched by *OffsetOutOfRangeError.
	ErrOffsetOutOfRange = errors.New("client: offset below the partition's log start")
	// ErrDeleteUnfinished is returned by OffsetStore.DeleteConsumer when
	// the offsets are deleted (durably) but their renamed directory could
	// not be removed; the next DeleteConsumer removes it.
	ErrDeleteUnfinished = errors.New("client: offsets deleted, their directory not removed yet")
)

// OffsetOutOfRangeError is returned by a read from an offset below the
// partition's log start: retention deleted the records there (or a replica
// was reset to its leader's start). It carries the range a reader can
// still use, as Kafka's OFFSET_OUT_OF_RANGE does; a consumer's reset policy
// (ConsumerConfig.OffsetReset) decides where to go on.
type OffsetOutOfRangeError struct {
	// Topic and Partition name the partition.
	Topic     string
	Partition int
	// Offset is the offset asked for.
	Offset uint64
	// LogStart is the first offset still readable.
	LogStart uint64
	// HighWatermark is the end of what is readable.
	HighWatermark uint64
}

func (e *OffsetOutOfRangeError) Error() string {
	return fmt.Sprintf("client: read %s/%d: offset %d is below the log start %d (records %d to %d are readable)",
		e.Topic, e.Partition, e.Offset, e.LogStart, e.LogStart, e.HighWatermark)
}

// Is makes errors.Is(err, ErrOffsetOutOfRange) true.
func (e *OffsetOutOfRangeError) Is(target error) bool { return target == ErrOffsetOutOfRange }

// OffsetRegressionError is returned by Commit for an offset below the one
// already committed. Commit never moves durable progress backwards; the
// stored offset is left as it was. Only an explicit OffsetStore.Reset does.
type OffsetRegressionError struct {
	// ConsumerID, Topic and Partition name the offset.
	ConsumerID string
	Topic      string
	Partition  int
	// Committed is the offset on disk.
	Committed uint64
	// Requested is the lower offset the caller tried to commit.
	Requested uint64
}

func (e *OffsetRegressionError) Error() string {
	return fmt.Sprintf("client: commit %s/%s/%d: offset %d is below the committed offset %d; durable progress never moves backwards",
		e.ConsumerID, e.Topic, e.Partition, e.Requested, e.Committed)
}

// OffsetBeyondEndError is returned by Consumer.Commit, and by the commit and
// reset of a replicated topic's offsets (cluster.Cluster.CommitOffset and
// ResetOffset), for an offset past the end of what the partition serves:
// its log end for a topic, its high watermark for a replicated topic
// (Source.NextOffset). Such an offset names records nobody can have read: a
// consumer restarted there would skip every record written up to it. Nothing
// is written; the stored offset is left as it was.
//
// Committing or resetting to exactly the end is allowed: it means "read
// only what comes next".
type OffsetBeyondEndError struct {
	// Op is "commit" or "reset".
	Op string
	// ConsumerID, Topic and Partition name the offset.
	ConsumerID string
	Topic      string
	Partition  int
	// Requested is the offset the caller tried to store.
	Requested uint64
	// End is the partition's end when the request was refused: the offset
	// the next readable record will get.
	End uint64
}

func (e *OffsetBeyondEndError) Error() string {
	return fmt.Sprintf("client: %s %s/%s/%d: offset %d is past the partition's end %d (the next offset a consumer can read); nothing was stored",
		e.Op, e.ConsumerID, e.Topic, e.Partition, e.Requested, e.End)
}

// Is makes errors.Is(err, ErrOffsetBeyondEnd) true.
func (e *OffsetBeyondEndError) Is(target error) bool { return target == ErrOffsetBeyondEnd }

// OffsetCorruptionError reports an offset file that is not the document
// PyStream writes: bad JSON, a missing, duplicated, unknown or wrongly typed
// field, a negative offset, an unknown version or data after the object.
// The file is never repaired or overwritten: a Commit or Reset to it fails
// with this error too, until an operator deals with the file.
type OffsetCorruptionError struct {
	// Path is the offset file, empty when ParseOffsetFile judged bytes that
	// came from nowhere in particular.
	Path string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying cause, if any.
	Err error
}

func (e *OffsetCorruptionError) Error() string {
	s := "client: offset file"
	if e.Path != "" {
		s += " " + e.Path
	}
	s += ": " + e.Reason
	if e.Err != nil {
		s += fmt.Sprintf(": %v", e.Err)
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *OffsetCorruptionError) Unwrap() error { return e.Err }
