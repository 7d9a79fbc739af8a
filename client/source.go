package client

import (
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// Source is what a Consumer needs of a partitioned log. A *topic.Topic is a
// Source; so is anything else that can serve reads by partition, such as a
// replicated topic that reads from its leader up to the high watermark.
type Source interface {
	// Name is the topic name, used as a directory name by the OffsetStore.
	Name() string
	// PartitionCount is the number of partitions, ids 0 to count-1.
	PartitionCount() int
	// Read returns up to maxRecords records of one partition starting at
	// the partition-local offset start.
	Read(partition int, start uint64, maxRecords int) ([]log.Record, error)
	// NextOffset is the end of what Read serves in one partition: the
	// offset the next readable record will get — the log end of a topic
	// partition, the high watermark of a replicated one. Consumer.Commit
	// refuses a position past it (*OffsetBeyondEndError). It may grow
	// between calls, never shrink while the Source is open.
	NextOffset(partition int) (uint64, error)
	// LogStart is the first offset Read serves in one partition: 0 until
	// retention deletes records from its front. A Read below it fails with
	// a *OffsetOutOfRangeError (a replicated topic) or an error wrapping
	// segment.ErrBeforeLogStart (a topic); the Consumer's OffsetReset
	// decides what happens next. It may grow between calls, never shrink.
	LogStart(partition int) (uint64, error)
}

// Sink is what a Producer needs of a partitioned log. A *topic.Topic is a
// Sink.
type Sink interface {
	// Name is the topic name, copied into every SendResult.
	Name() string
	// Append routes and appends one record.
	Append(key, payload []byte) (topic.AppendResult, error)
	// AppendBatch routes and appends many records; results are in input
	// order.
	AppendBatch(msgs []topic.Message) ([]topic.AppendResult, error)
}

// ConsumerConfig configures NewConsumer.
type ConsumerConfig struct {
	// ID is the consumer id; it must pass topic.ValidateName.
	ID string
	// Topic is the partitioned log to read.
	Topic Source
	// Partition is the one partition this consumer reads.
	Partition int
	// Offsets stores the consumer's committed offsets.
	Offsets *OffsetStore
	// OffsetReset is where Fetch goes on when the position is below the
	// partition's log start (retention deleted the records there): Kafka's
	// auto.offset.reset. The zero value means OffsetResetEarliest, the
	// choice that skips no record still readable, as a consumer that
	// never committed starts at the oldest record too.
	OffsetReset OffsetReset
	// OnReset, when set, is called (on the Fetch's goroutine) after every
	// reset of the position, before the records from the new position are
	// read. Consumer.LastReset reports the latest one either way.
	OnReset func(OffsetResetEvent)
}
