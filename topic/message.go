package topic

import "github.com/pystream/pystream/log"

// Message is one record to append through a topic: an optional routing key
// and the payload. A nil Key means "no key" (round robin); a non-nil empty
// Key is a real key and is hashed like any other.
type Message struct {
	Key     []byte
	Payload []byte
}

// AppendResult says where an appended record landed: the partition chosen by
// routing and the record as that partition's log stored it.
type AppendResult struct {
	// Partition is the partition id the record was written to.
	Partition int
	// Offset is the record's partition-local offset (equal to Record.Offset).
	Offset uint64
	// Record is the stored record, with its offset and timestamp.
	Record log.Record
}
