package kafka_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// batchOf is a valid uncompressed record batch of one record per value,
// each keyed "k".
func batchOf(t *testing.T, values ...[]byte) []byte {
	t.Helper()
	return producerBatchOf(t, -1, -1, -1, 0, values...)
}

// producerBatchOf is batchOf written by producer id at epoch from
// sequence seq, with attributes attrs.
func producerBatchOf(t *testing.T, id int64, epoch int16, seq int32, attrs int16, values ...[]byte) []byte {
	t.Helper()
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Key: []byte("k"), Value: v}
		enc := r.AppendTo(nil)[1:]
		recs = binary.AppendVarint(recs, int64(len(enc)))
		recs = append(recs, enc...)
	}
	n := int32(len(values))
	rb := kmsg.RecordBatch{Length: int32(49 + len(recs)), Magic: 2, LastOffsetDelta: n - 1, FirstTimestamp: 1_700_000_000_000,
		MaxTimestamp: 1_700_000_000_000 + int64(n) - 1, ProducerID: id, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: n, Records: recs,
		Attributes: attrs}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32c(b[21:]))
	return b
}

// TestKafkaProduceMessageTooLarge: a batch holding one record whose
// stored payload is above the log's largest payload is MESSAGE_TOO_LARGE
// for its partition, and no record of the batch is written, not even the
// small one before it.
func TestKafkaProduceMessageTooLarge(t *testing.T) {
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.MaxRequestBytes = 2 << 20 })
	big := bytes.Repeat([]byte("x"), log.DefaultMaxPayloadSize+1)
	req := produceRequest(9, batchOf(t, []byte("small"), big))
	resp := roundTrip(t, f.dial(t, 1), req, 9).(*kmsg.ProduceResponse)
	require.Equal(t, kerr.MessageTooLarge.Code, resp.Topics[0].Partitions[0].ErrorCode)
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Zero(t, hwm, "nothing written")
}

// TestKafkaProduceAcksZero: a produce with acks=0 writes its records and
// answers nothing: the next answer on the connection is the next
// request's.
func TestKafkaProduceAcksZero(t *testing.T) {
	f := start(t, 1, 1, 1)
	nc := f.dial(t, 1)
	req := produceRequest(9, batchOf(t, []byte("a"), []byte("b"), []byte("c")))
	req.Acks = 0
	_, err := nc.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1))
	require.NoError(t, err)
	// Requests on one connection are answered in order, so once the
	// ApiVersions answer (correlation id 7) is here the produce is done.
	resp := roundTrip(t, nc, &kmsg.ApiVersionsRequest{Version: 0}, 0).(*kmsg.ApiVersionsResponse)
	require.Zero(t, resp.ErrorCode)
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(3), hwm, "the records are written")
	recs, err := f.c.ReadCommitted("events", 0, 0, 3)
	require.NoError(t, err)
	require.Len(t, recs, 3)

	// And nothing else is waiting to be read.
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	var b [1]byte
	_, err = io.ReadFull(nc, b[:])
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "no answer to the acks=0 produce, got %v", err)
}

// forwarding is the embedded cluster saying every queued write is
// forwarded to a leader in another process, with a Wait that returns only
// once the waits of every partition of the request are under way together
// (or after a bound, failing): a listener that waited for forwarded
// partitions one after the other would add up their round trips.
type forwarding struct {
	*backend.Local
	partitions int
	mu         sync.Mutex
	entered    int
	together   chan struct{}
	apart      atomic.Bool // a wait gave up waiting for the others
}

func (f *forwarding) SendQueued(name string, partition int, msgs []topic.Message) cluster.Queued {
	q := f.Local.SendQueued(name, partition, msgs)
	wait := q.Wait
	q.Forwarded = true
	q.Wait = func() ([]cluster.SendResult, error) {
		f.mu.Lock()
		if f.entered++; f.entered == f.partitions {
			close(f.together)
		}
		f.mu.Unlock()
		select {
		case <-f.together:
		case <-time.After(5 * time.Second):
			f.apart.Store(true)
			return nil, errors.New("forwarded partitions waited for one after the other")
		}
		return wait()
	}
	return q
}

// TestKafkaProduceWaitsForForwardedPartitionsTogether: the partitions of a
// produce request whose leaders are in another process are waited for
// together, not one after the other.
func TestKafkaProduceWaitsForForwardedPartitionsTogether(t *testing.T) {
	const partitions = 3
	fw := &forwarding{partitions: partitions, together: make(chan struct{})}
	f := startOver(t, func(kc kafka.Cluster) kafka.Cluster { fw.Local = kc.(*backend.Local); return fw }, 1, partitions, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.srv.Addr(1)), kgo.DefaultProduceTopic("events"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(50*time.Millisecond))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for p := range partitions {
		recs = append(recs, &kgo.Record{Value: []byte("v"), Partition: int32(p)})
	}
	require.NoError(t, cl.ProduceSync(t.Context(), recs...).FirstErr())
	require.False(t, fw.apart.Load(), "the forwarded partitions were waited for one after the other")
}

// A produced partition whose write fails calls Config.WriteFailed (the
// server wakes its controller, as an HTTP write's failure does); one that
// succeeds does not.
func TestKafkaProduceFailureCallsWriteFailed(t *testing.T) {
	var failed atomic.Int64
	f := startOver(t, nil, 3, 1, 3, func(cfg *kafka.Config) { cfg.WriteFailed = func() { failed.Add(1) } })
	st, err := f.c.Status("events", 0)
	require.NoError(t, err)
	nc := f.dial(t, st.Leader)
	resp := roundTrip(t, nc, produceRequest(7, batchOf(t, []byte("ok"))), 7).(*kmsg.ProduceResponse)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
	require.Zero(t, failed.Load(), "a write that succeeds")

	require.NoError(t, f.c.StopBroker(st.Followers[0]))
	resp = roundTrip(t, nc, produceRequest(7, batchOf(t, []byte("a follower is stopped"))), 7).(*kmsg.ProduceResponse)
	require.NotZero(t, resp.Topics[0].Partitions[0].ErrorCode)
	require.Positive(t, failed.Load(), "a write that fails")
}
