package kafka_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/topic/envelope"
)

// TestKafkaIdempotentKgoDefaults: kgo with its defaults is an idempotent
// producer once InitProducerID is served — a producer id from the
// cluster, five produce requests in flight per broker — and every record
// it acknowledges is stored once, with its producer identity.
func TestKafkaIdempotentKgoDefaults(t *testing.T) {
	f := start(t, 3, 3, 3)
	cl := f.client(t, kgo.DefaultProduceTopic("events"))
	const n = 600
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range n {
		wg.Add(1)
		cl.Produce(ctx(t), &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%17), Value: fmt.Appendf(nil, "v%d", i)}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Empty(t, errs)
	id, epoch, err := cl.ProducerID(ctx(t))
	require.NoError(t, err)
	require.GreaterOrEqual(t, id, int64(0), "kgo has a producer id: idempotence is on")
	require.Zero(t, epoch)

	seen := map[string]int{}
	for p := range 3 {
		recs, err := f.c.ReadCommitted("events", p, 0, n)
		require.NoError(t, err)
		for _, r := range recs {
			rec := envelope.Decode(r.Payload)
			seen[string(rec.Value)]++
			require.True(t, rec.HasProducer, "stored with its producer identity")
			require.Equal(t, id, rec.Producer.ID)
		}
	}
	require.Len(t, seen, n)
	for v, k := range seen {
		require.Equal(t, 1, k, "%s stored once", v)
	}
}

// TestKafkaIdempotentRetry: a batch sent again — its answer was lost — is
// answered with the base offset of its first write and stored once; a
// gap is OUT_OF_ORDER_SEQUENCE_NUMBER, an unknown producer
// UNKNOWN_PRODUCER_ID; a control batch (a transaction's marker, the
// coordinator's to write) is refused, and so is an InitProducerID with an
// empty transactional id.
func TestKafkaIdempotentRetry(t *testing.T) {
	f := start(t, 1, 1, 1)
	nc := f.dial(t, 1)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 4
	ir := roundTrip(t, nc, init, 4).(*kmsg.InitProducerIDResponse)
	require.Zero(t, ir.ErrorCode)
	require.GreaterOrEqual(t, ir.ProducerID, int64(0))
	require.Zero(t, ir.ProducerEpoch)
	again := roundTrip(t, nc, init, 4).(*kmsg.InitProducerIDResponse)
	require.NotEqual(t, ir.ProducerID, again.ProducerID, "every init gets a new id")

	produce := func(batch []byte) kmsg.ProduceResponseTopicPartition {
		return roundTrip(t, nc, produceRequest(9, batch), 9).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	}
	id := ir.ProducerID
	first := produce(producerBatchOf(t, id, 0, 0, 0, []byte("a"), []byte("b")))
	require.Zero(t, first.ErrorCode)
	require.Zero(t, first.BaseOffset)
	retry := produce(producerBatchOf(t, id, 0, 0, 0, []byte("a"), []byte("b")))
	require.Zero(t, retry.ErrorCode, "a retry is not an error")
	require.Zero(t, retry.BaseOffset, "answered with the first write's offset")
	next := produce(producerBatchOf(t, id, 0, 2, 0, []byte("c")))
	require.Zero(t, next.ErrorCode)
	require.EqualValues(t, 2, next.BaseOffset)

	require.Equal(t, kerr.OutOfOrderSequenceNumber.Code, produce(producerBatchOf(t, id, 0, 9, 0, []byte("gap"))).ErrorCode)
	require.Equal(t, kerr.UnknownProducerID.Code, produce(producerBatchOf(t, again.ProducerID, 0, 4, 0, []byte("x"))).ErrorCode)
	require.Equal(t, kerr.CorruptMessage.Code, produce(producerBatchOf(t, id, 0, 3, 0x30, []byte("marker"))).ErrorCode)
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.EqualValues(t, 3, hwm, "a, b and c, each once")

	txn := kmsg.NewPtrInitProducerIDRequest()
	txn.Version, txn.TransactionalID, txn.TransactionTimeoutMillis = 4, kmsg.StringPtr(""), 60_000
	tr := roundTrip(t, nc, txn, 4).(*kmsg.InitProducerIDResponse)
	require.Equal(t, kerr.InvalidRequest.Code, tr.ErrorCode)
	require.EqualValues(t, -1, tr.ProducerID)
}

// TestKafkaIdempotentSarama: sarama with Producer.Idempotent (which
// requires one request in flight and acks=all) initializes a producer id
// and writes each record once, with its producer identity.
func TestKafkaIdempotentSarama(t *testing.T) {
	f := start(t, 3, 2, 3)
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	var seeds []string
	for _, b := range f.c.Brokers() {
		seeds = append(seeds, f.srv.Addr(b.ID))
	}
	prod, err := sarama.NewSyncProducer(seeds, cfg)
	require.NoError(t, err, "sarama with Idempotent=true starts")
	defer func() { _ = prod.Close() }()
	for i := range 10 {
		_, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "events", Partition: int32(i % 2), Value: sarama.StringEncoder(fmt.Sprint("v", i))})
		require.NoError(t, err)
		require.EqualValues(t, i/2, off)
	}
	for p := range 2 {
		recs, err := f.c.ReadCommitted("events", p, 0, 100)
		require.NoError(t, err)
		require.Len(t, recs, 5)
		for i, r := range recs {
			rec := envelope.Decode(r.Payload)
			require.True(t, rec.HasProducer)
			require.EqualValues(t, i, rec.Producer.Sequence)
		}
	}
}

// TestKafkaIdempotentKcat: kcat (librdkafka) with enable.idempotence=true
// produces, which it refuses to do against a broker without
// InitProducerID, and every line is stored once.
func TestKafkaIdempotentKcat(t *testing.T) {
	f := start(t, 1, 1, 1)
	f.kcat(t, "a\nb\nc\n", "-P", "-t", "events", "-p", "0", "-X", "enable.idempotence=true")
	out := f.kcat(t, "", "-C", "-e", "-q", "-t", "events", "-p", "0", "-o", "beginning", "-f", "%o %s\n")
	require.Equal(t, "0 a\n1 b\n2 c\n", out)
	recs, err := f.c.ReadCommitted("events", 0, 0, 10)
	require.NoError(t, err)
	for _, r := range recs {
		require.True(t, envelope.Decode(r.Payload).HasProducer, "written by an idempotent producer")
	}
}
