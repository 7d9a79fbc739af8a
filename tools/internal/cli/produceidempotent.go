package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
)

// This file is produce's idempotent sending, its default
// (docs/phase-6-network-api.md § Idempotent producers): the records go
// through an apiclient.Producer, which numbers each partition's records
// and sends a request whose answer was lost again with the same numbers,
// so that every line is stored once however often a request is retried.
// Sequence numbers count per partition, so produce routes the records
// itself when no partition is given: by the one rule every PyStream
// producer follows (topic.Router: a key by topic.PartitionForKey, no key
// round robin), over the partition count the server gives at the start.

// idempotentSender sends produce's batches through one idempotent
// producer.
type idempotentSender struct {
	p     *apiclient.Producer
	topic string
	// partition is the one partition every record goes to; -1 when
	// router routes them.
	partition int
	router    *topic.Router
}

// newIdempotentSender makes a producer (POST /api/producers) and, when
// partition is -1, a router over the topic's partitions.
func newIdempotentSender(ctx context.Context, c *apiclient.Client, topicName string, partition int) (*idempotentSender, error) {
	s := &idempotentSender{topic: topicName, partition: partition}
	if partition < 0 {
		t, err := c.Topic(ctx, topicName)
		if err != nil {
			return nil, err
		}
		if t.PartitionCount < 1 {
			return nil, fmt.Errorf("%w: topic %q has %d partitions", apiclient.ErrUnexpectedResponse, topicName, t.PartitionCount)
		}
		s.router = topic.NewRouter(t.PartitionCount)
	}
	p, err := c.NewProducer(ctx)
	if err != nil {
		return nil, err
	}
	s.p = p
	return s, nil
}

// send produces batch, each partition's share as one request, the
// partitions concurrently. placed[i] is where record i landed; failed[i]
// the error of its share, nil when it was acknowledged.
func (s *idempotentSender) send(ctx context.Context, batch []apiclient.ProduceRecord) (placed []apiclient.ProduceResult, failed []error) {
	shares := map[int][]int{}
	if s.router == nil {
		idx := make([]int, len(batch))
		for i := range idx {
			idx[i] = i
		}
		shares[s.partition] = idx
	} else {
		msgs := make([]topic.Message, len(batch))
		for i, r := range batch {
			msgs[i] = topic.Message{Key: r.Key}
		}
		shares = s.router.Plan(msgs).Messages
	}
	placed, failed = make([]apiclient.ProduceResult, len(batch)), make([]error, len(batch))
	var wg sync.WaitGroup
	for p, idx := range shares {
		wg.Go(func() {
			recs := make([]apiclient.ProduceRecord, len(idx))
			for j, i := range idx {
				recs[j] = batch[i]
			}
			res, err := s.sendShare(ctx, p, recs)
			if err == nil && len(res.Records) != len(idx) {
				err = fmt.Errorf("%w: %d results for %d records", apiclient.ErrUnexpectedResponse, len(res.Records), len(idx))
			}
			for j, i := range idx {
				if err != nil {
					failed[i] = err
				} else {
					placed[i] = res.Records[j]
				}
			}
		})
	}
	wg.Wait()
	return placed, failed
}

// sendShare sends one partition's records: as a raw body when it is one
// record too large for a JSON body (sendBatch's rule), as JSON otherwise.
func (s *idempotentSender) sendShare(ctx context.Context, partition int, recs []apiclient.ProduceRecord) (*apiclient.ProduceResponse, error) {
	if len(recs) == 1 && len(recs[0].Headers) == 0 && encodedSize(recs[0]) > produceBatchBytes {
		return s.p.ProduceRawTo(ctx, s.topic, partition, recs[0].Key, recs[0].Value)
	}
	return s.p.ProduceTo(ctx, s.topic, partition, recs)
}

// produceIdempotent sends one batch through s after lines 1..sent were
// acknowledged, and prints where each record landed, in input order. When
// a share failed it prints the records acknowledged all the same and
// returns the first failure with which lines were acknowledged, which
// refused (nothing written) and which unknown (the producer gave up
// retrying).
func (a *app) produceIdempotent(ctx context.Context, out *bufio.Writer, s *idempotentSender, topicName string, sent int, batch []apiclient.ProduceRecord) error {
	placed, failed := s.send(ctx, batch)
	var first error
	acked, unknown := make([]bool, len(batch)), make([]bool, len(batch))
	for i, err := range failed {
		if errors.Is(err, apiclient.ErrDuplicateSequence) {
			// Written before, longer ago than the partition keeps its
			// offsets: acknowledged, with no offset to print.
			acked[i] = true
			continue
		}
		if err == nil {
			acked[i] = true
			if perr := a.printProduced(out, topicName, placed[i]); perr != nil {
				return perr
			}
			continue
		}
		if first == nil {
			first = err
		}
		unknown[i] = errors.Is(err, apiclient.ErrProducerOutcomeUnknown)
	}
	if first == nil {
		return nil
	}
	return fmt.Errorf("%w; %s", a.apiError("produce "+topicName, first), idempotentBatchOutcome(sent, acked, unknown))
}
