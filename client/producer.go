package client

import (
	"fmt"

	"github.com/pystream/pystream/topic"
)

var (
	_ Source = (*topic.Topic)(nil)
	_ Sink   = (*topic.Topic)(nil)
)

// SendResult says where a sent record landed.
type SendResult struct {
	// Topic is the topic's name.
	Topic string
	// Partition is the partition the record was routed to.
	Partition int
	// Offset is the record's partition-local offset.
	Offset uint64
	// Timestamp is the append time the log assigned, nanoseconds since the
	// Unix epoch.
	Timestamp int64
}

// Producer sends raw byte payloads to a topic and reports where each one
// landed. It adds nothing of its own: no encoding (bytes stay bytes), and
// routing, offsets and durability are the topic's. A nil key means round
// robin; any other key, the empty one included, is hashed.
//
// A Producer borrows its Sink and never closes it. It is safe for
// concurrent use (as safe as its Sink; a *topic.Topic is).
type Producer struct {
	sink Sink
}

// NewProducer returns a producer that sends to s.
func NewProducer(s Sink) *Producer {
	return &Producer{sink: s}
}

func resultOf(name string, r topic.AppendResult) SendResult {
	return SendResult{Topic: name, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Record.Timestamp}
}

// Send appends one record and returns once it is durable.
func (p *Producer) Send(key, payload []byte) (SendResult, error) {
	if p.sink == nil {
		return SendResult{}, fmt.Errorf("client: send: no topic: %w", ErrInvalidConfig)
	}
	r, err := p.sink.Append(key, payload)
	if err != nil {
		return SendResult{}, fmt.Errorf("client: send to %q: %w", p.sink.Name(), err)
	}
	return resultOf(p.sink.Name(), r), nil
}

// SendBatch appends many records, one write and one fsync per partition
// involved, and returns their results in input order.
//
// When the Sink reports that only some partitions failed (a
// *topic.BatchError, reachable with errors.As), SendBatch returns every
// result along with the error: a record whose Partition the BatchError names
// (BatchError.Failed) was not acknowledged, every other record was, and its
// result is complete. On any other error the results are nil and nothing was
// acknowledged.
func (p *Producer) SendBatch(msgs []topic.Message) ([]SendResult, error) {
	if p.sink == nil {
		return nil, fmt.Errorf("client: send batch: no topic: %w", ErrInvalidConfig)
	}
	name := p.sink.Name()
	rs, err := p.sink.AppendBatch(msgs)
	var out []SendResult
	if rs != nil {
		out = make([]SendResult, len(rs))
		for i, r := range rs {
			out[i] = resultOf(name, r)
		}
	}
	if err != nil {
		return out, fmt.Errorf("client: send batch to %q: %w", name, err)
	}
	return out, nil
}
