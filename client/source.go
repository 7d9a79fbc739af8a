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
}
