package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/pystream/pystream/topic/envelope"
)

// This file is the idempotent producer of the HTTP API (Kafka's KIP-98,
// docs/kafka.md § Idempotent producers): a produce request carries the
// producer's id and epoch and the sequence number of its first record, so
// that a request whose answer was lost — a timeout, a dropped
// connection, a 503 — can be sent again as it was, and the partition's
// leader stores it once, answering the second request with the offsets
// of the first write.

// Retries of an idempotent producer's request: at most producerTries
// sends in all; between two, the answer's Retry-After, or a backoff that
// starts at producerBackoff and doubles up to producerMaxBackoff.
const (
	producerTries      = 10
	producerBackoff    = 100 * time.Millisecond
	producerMaxBackoff = 2 * time.Second
)

// ErrProducerOutcomeUnknown: an idempotent producer's request to a
// partition failed and it cannot know whether the records were written
// (the retries ran out, the context ended, the server failed); the
// producer refuses further requests to that partition, whose next
// sequence number it no longer knows. A new producer (NewProducer) starts
// afresh. Wrapped in a *ProducerOutcomeError.
var ErrProducerOutcomeUnknown = errors.New("apiclient: the outcome of an idempotent produce is unknown")

// ProducerOutcomeError is a partition an idempotent producer gave up on:
// the request at Sequence may or may not have been written. Err is the
// last error its retries met, or, for a later request, the first one's.
type ProducerOutcomeError struct {
	Topic     string
	Partition int
	Sequence  int32
	Err       error
}

func (e *ProducerOutcomeError) Error() string {
	return fmt.Sprintf("apiclient: %s/%d: idempotent produce at sequence %d: outcome unknown, the partition takes no more requests of this producer (start a new one): %v",
		e.Topic, e.Partition, e.Sequence, e.Err)
}

// Is makes the error match ErrProducerOutcomeUnknown.
func (e *ProducerOutcomeError) Is(target error) bool { return target == ErrProducerOutcomeUnknown }

// Unwrap returns the error the request met.
func (e *ProducerOutcomeError) Unwrap() error { return e.Err }

// NewProducerID calls POST /api/producers: a producer id never handed out
// before in the cluster, at epoch 0. A server that cannot reserve one now
// answers an *Error matching ErrUnavailable.
func (c *Client) NewProducerID(ctx context.Context) (*NewProducerResponse, error) {
	var out NewProducerResponse
	return &out, c.do(ctx, http.MethodPost, "/api/producers", nil, nil, &out)
}

// Producer is an idempotent producer: it numbers its records per
// partition and sends a request whose answer it did not get again, with
// the same sequence numbers, so that the records are stored once. It is
// safe for concurrent use; requests to one partition are sent one at a
// time, in the order of the calls.
type Producer struct {
	c *Client
	// id and epoch are the producer's identity, from POST /api/producers.
	id    int64
	epoch int16
	// mu guards parts.
	mu    sync.Mutex
	parts map[producerPartition]*producerSeq
}

// producerPartition names one partition of one topic.
type producerPartition struct {
	topic     string
	partition int
}

// producerSeq is the producer's state on one partition. Its mutex is held
// for a whole request, retries included: sequence numbers must reach the
// leader in order.
type producerSeq struct {
	mu sync.Mutex
	// next is the sequence number of the next record.
	next int32
	// lost, when set, is the error of the request whose outcome is
	// unknown; the partition takes no more requests.
	lost *ProducerOutcomeError
}

// NewProducer returns an idempotent producer with a new producer id
// (NewProducerID).
func (c *Client) NewProducer(ctx context.Context) (*Producer, error) {
	res, err := c.NewProducerID(ctx)
	if err != nil {
		return nil, err
	}
	return &Producer{c: c, id: res.ProducerID, epoch: res.Epoch, parts: map[producerPartition]*producerSeq{}}, nil
}

// ID is the producer's id.
func (p *Producer) ID() int64 { return p.id }

// Epoch is the producer's epoch.
func (p *Producer) Epoch() int16 { return p.epoch }

// ProduceTo produces records to one partition as one batch, numbered from
// the partition's next sequence number. A request that gets no answer, or
// a retriable one (503: a leader failing over, a write not yet on every
// replica; a connection error; a timeout of the HTTP client), is sent
// again as it was, after the answer's Retry-After or a growing backoff, at
// most 10 times in all: the records are stored once, and the answer is
// their offsets. A refusal on the first send (a 4xx) wrote nothing and
// leaves the sequence where it was. When the outcome is unknown the error
// is a *ProducerOutcomeError and the partition takes no more requests of
// this producer.
func (p *Producer) ProduceTo(ctx context.Context, topic string, partition int, records []ProduceRecord) (*ProduceResponse, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("%w: produce needs at least one record", ErrInvalidArgument)
	}
	if partition < 0 {
		return nil, fmt.Errorf("%w: partition %d", ErrInvalidArgument, partition)
	}
	return p.produce(ctx, topic, partition, len(records), func(seq int32) (*ProduceResponse, error) {
		req := ProduceRequest{Records: records, Producer: &ProducerIdentity{ID: p.id, Epoch: p.epoch, Sequence: seq}}
		var out ProduceResponse
		err := p.c.do(ctx, http.MethodPost, topicPath(topic)+"/records", url.Values{"partition": {strconv.Itoa(partition)}}, req, &out)
		return &out, err
	})
}

// ProduceRawTo is ProduceTo of one record whose value is sent as the raw
// request body (application/octet-stream), avoiding base64: the form for a
// record too large for a JSON body.
func (p *Producer) ProduceRawTo(ctx context.Context, topic string, partition int, key, value []byte) (*ProduceResponse, error) {
	if partition < 0 {
		return nil, fmt.Errorf("%w: partition %d", ErrInvalidArgument, partition)
	}
	return p.produce(ctx, topic, partition, 1, func(seq int32) (*ProduceResponse, error) {
		q := url.Values{"partition": {strconv.Itoa(partition)},
			"producer_id": {strconv.FormatInt(p.id, 10)}, "producer_epoch": {strconv.Itoa(int(p.epoch))},
			"sequence": {strconv.FormatInt(int64(seq), 10)}}
		return p.c.produceRaw(ctx, topic, key, value, q)
	})
}

// seqOf returns the producer's state on a partition, made when missing.
func (p *Producer) seqOf(topic string, partition int) *producerSeq {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := producerPartition{topic, partition}
	s, ok := p.parts[k]
	if !ok {
		s = &producerSeq{}
		p.parts[k] = s
	}
	return s
}

// produce sends one request of n records to a partition through send,
// which sends it with first sequence number seq, and retries it as
// ProduceTo says.
func (p *Producer) produce(ctx context.Context, topic string, partition, n int, send func(seq int32) (*ProduceResponse, error)) (*ProduceResponse, error) {
	s := p.seqOf(topic, partition)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost != nil {
		return nil, s.lost
	}
	seq := s.next
	wait := producerBackoff
	var err error
	for try := 1; ; try++ {
		var out *ProduceResponse
		out, err = send(seq)
		switch outcome(err, try) {
		case outcomeWritten:
			s.next = envelope.SequenceAt(seq, int64(n))
			if err != nil {
				return nil, err // written before, offsets forgotten
			}
			return out, nil
		case outcomeNotWritten:
			return nil, err
		case outcomeRetry:
			if try < producerTries && ctx.Err() == nil {
				d := wait
				var e *Error
				if errors.As(err, &e) && e.RetryAfter > 0 {
					d = e.RetryAfter
				}
				wait = min(2*wait, producerMaxBackoff)
				if sleep(ctx, d) == nil {
					continue
				}
			}
		}
		s.lost = &ProducerOutcomeError{Topic: topic, Partition: partition, Sequence: seq, Err: err}
		return nil, s.lost
	}
}

// What an idempotent request's answer says of its records.
type produceOutcome int

const (
	// outcomeWritten: stored (acknowledged, or counted written).
	outcomeWritten produceOutcome = iota
	// outcomeNotWritten: refused before anything was written.
	outcomeNotWritten
	// outcomeRetry: unknown, and worth sending again.
	outcomeRetry
	// outcomeUnknown: unknown, and not worth sending again.
	outcomeUnknown
)

// outcome classifies the error of an idempotent request's try-th send.
// A 4xx answer refused the request whole; on a later send the first one
// may have been written all the same, so only the first send's refusal
// says nothing was. duplicate_sequence says the records were written
// before. A 503, or no answer at all (a connection error, a timeout, a
// body cut short), is retried; any other answer (a 500, a 507) leaves the
// outcome unknown.
func outcome(err error, try int) produceOutcome {
	if err == nil {
		return outcomeWritten
	}
	var e *Error
	if !errors.As(err, &e) {
		// No answer: a connection error, the HTTP client's timeout, a
		// body cut short. (The caller's context ending stops the
		// retries in produce.)
		return outcomeRetry
	}
	switch {
	case e.Code == CodeDuplicateSequence:
		return outcomeWritten
	case e.Status == http.StatusServiceUnavailable:
		return outcomeRetry
	case e.Status >= 400 && e.Status < 500 && try == 1:
		return outcomeNotWritten
	}
	return outcomeUnknown
}

// sleep waits d, or until ctx ends (its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
