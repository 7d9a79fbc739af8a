package kafka_test

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// TestKafkaPipelinedProduce: produce requests a client sends back to back
// on one connection — an idempotent producer's five in flight, in one
// write — are begun together and reach the partition in the order sent
// (their sequence numbers would be refused otherwise), and every request
// is answered in order, a request of another kind behind them too.
func TestKafkaPipelinedProduce(t *testing.T) {
	f := start(t, 1, 1, 1)
	nc := f.dial(t, 1)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 4
	id := roundTrip(t, nc, init, 4).(*kmsg.InitProducerIDResponse).ProducerID

	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))
	var out []byte
	for i := range 5 {
		b := producerBatchOf(t, id, 0, int32(2*i), 0, []byte{'a' + byte(i)}, []byte{'A' + byte(i)})
		out = append(out, formatter.AppendRequest(nil, produceRequest(9, b), int32(i+1))...)
	}
	out = append(out, formatter.AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 6)...)
	require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := nc.Write(out)
	require.NoError(t, err)

	for i := range 6 {
		body := readFrame(t, nc)
		require.Equal(t, int32(i+1), int32(binary.BigEndian.Uint32(body)), "answered in the order sent")
		if i == 5 {
			break // the ApiVersions answer
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(9)
		require.NoError(t, resp.ReadFrom(body[5:])) // correlation id, no header tags
		p := resp.Topics[0].Partitions[0]
		require.Zero(t, p.ErrorCode, "request %d", i+1)
		require.EqualValues(t, 2*i, p.BaseOffset, "request %d", i+1)
	}
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.EqualValues(t, 10, hwm, "each record once")
}

// heldAnswers is the embedded cluster with the answer of every write to
// partition 0 held until release closes (the write itself is queued at
// once), and begun closed when a write to partition 1 is queued.
type heldAnswers struct {
	*backend.Local
	waiting chan struct{} // closed when an answer of partition 0 is waited for
	release chan struct{}
	begun   chan struct{}
	once    sync.Once
	// queued, when not nil, receives a value as each write to partition
	// 0 is queued.
	queued chan struct{}
	freed  sync.Once
}

// free closes release once: a test registers it with t.Cleanup too, so
// that one that fails while answers are held still ends.
func (h *heldAnswers) free() { h.freed.Do(func() { close(h.release) }) }

func (h *heldAnswers) SendQueued(name string, partition int, msgs []topic.Message) cluster.Queued {
	q := h.Local.SendQueued(name, partition, msgs)
	switch partition {
	case 0:
		if h.queued != nil {
			h.queued <- struct{}{}
		}
		wait := q.Wait
		q.Wait = func() ([]cluster.SendResult, error) {
			h.once.Do(func() { close(h.waiting) })
			<-h.release
			return wait()
		}
	case 1:
		close(h.begun)
	}
	return q
}

// TestKafkaPipelinedProduceReadAhead: a produce request that arrives while
// the one before it on the connection is still unanswered is begun at
// once — its records queued for their partition — not once that one is
// answered; both are answered in the order sent.
func TestKafkaPipelinedProduceReadAhead(t *testing.T) {
	h := &heldAnswers{waiting: make(chan struct{}), release: make(chan struct{}), begun: make(chan struct{})}
	f := startOver(t, func(kc kafka.Cluster) kafka.Cluster { h.Local = kc.(*backend.Local); return h }, 1, 2, 1)
	nc := f.dial(t, 1)
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))
	send := func(partition int32, corr int32) {
		req := produceRequest(9, batchOf(t, []byte{'a' + byte(partition)}))
		req.Topics[0].Partitions[0].Partition = partition
		_, err := nc.Write(formatter.AppendRequest(nil, req, corr))
		require.NoError(t, err)
	}

	send(0, 1)
	select {
	case <-h.waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the first request was never waited for")
	}
	send(1, 2) // a write of its own, after the first is begun
	select {
	case <-h.begun:
	case <-time.After(10 * time.Second):
		close(h.release)
		t.Fatal("the second request was not begun while the first was unanswered")
	}
	close(h.release)

	for i := range 2 {
		body := readFrame(t, nc)
		require.Equal(t, int32(i+1), int32(binary.BigEndian.Uint32(body)), "answered in the order sent")
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(9)
		require.NoError(t, resp.ReadFrom(body[5:]))
		require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode, "request %d", i+1)
	}
}

// badProduce is a produce request frame (size prefix included) at a
// version the codec does not know, correlation id corr: begun like any
// produce request, its answer fails and closes the connection.
func badProduce(corr byte) []byte {
	return []byte{0, 0, 0, 10, 0, 0, 0x7f, 0, 0, 0, 0, corr, 0xff, 0xff}
}

// TestKafkaPipelinedProduceFailedAnswer: a produce request whose answer
// fails, behind one still unanswered, closes the connection once the one
// before it is answered; the requests behind it — a produce and an
// ApiVersions — are never answered.
func TestKafkaPipelinedProduceFailedAnswer(t *testing.T) {
	h := &heldAnswers{waiting: make(chan struct{}), release: make(chan struct{}), begun: make(chan struct{})}
	f := startOver(t, func(kc kafka.Cluster) kafka.Cluster { h.Local = kc.(*backend.Local); return h }, 1, 2, 1)
	t.Cleanup(h.free)
	nc := f.dial(t, 1)
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))
	_, err := nc.Write(formatter.AppendRequest(nil, produceRequest(9, batchOf(t, []byte("first"))), 1))
	require.NoError(t, err)
	select {
	case <-h.waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the first request was never waited for")
	}
	behind := badProduce(2)
	req := produceRequest(9, batchOf(t, []byte("behind")))
	req.Topics[0].Partitions[0].Partition = 1
	behind = append(behind, formatter.AppendRequest(nil, req, 3)...)
	behind = append(behind, formatter.AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 4)...)
	_, err = nc.Write(behind)
	require.NoError(t, err)
	h.free()

	body := readFrame(t, nc)
	require.Equal(t, int32(1), int32(binary.BigEndian.Uint32(body)), "the request before the failed one is answered")
	requireClosed(t, nc)

	// Still serving.
	resp := roundTrip(t, f.dial(t, 1), &kmsg.ApiVersionsRequest{Version: 0}, 0).(*kmsg.ApiVersionsResponse)
	require.Zero(t, resp.ErrorCode)
}

// TestKafkaPipelinedProduceBytesReleased: a connection cut while produce
// requests are begun and unanswered — five queued, a sixth read and
// waiting for its turn — gives back every byte they held in flight once
// they are waited for: the next connection's request, as large as the
// whole server-wide budget, is served.
func TestKafkaPipelinedProduceBytesReleased(t *testing.T) {
	const budget = 16 << 10
	h := &heldAnswers{waiting: make(chan struct{}), release: make(chan struct{}), begun: make(chan struct{}),
		queued: make(chan struct{}, 8)}
	f := startOver(t, func(kc kafka.Cluster) kafka.Cluster { h.Local = kc.(*backend.Local); return h }, 1, 2, 1,
		func(c *kafka.Config) {
			c.MaxInflightBytes, c.MaxRequestBytes = budget, budget
			c.FrameTimeout = 5 * time.Second // a leaked byte closes the next connection then
		})
	t.Cleanup(h.free)
	nc := f.dial(t, 1)
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))
	var out []byte
	for i := range maxInFlight + 1 {
		out = append(out, formatter.AppendRequest(nil, produceRequest(9, batchOf(t, []byte{'a' + byte(i)})), int32(i+1))...)
	}
	_, err := nc.Write(out)
	require.NoError(t, err)
	for range maxInFlight {
		select {
		case <-h.queued:
		case <-time.After(10 * time.Second):
			t.Fatal("the pipelined requests were not begun")
		}
	}
	require.NoError(t, nc.Close())
	h.free()

	// A frame of the whole budget, less a few bytes: served only when
	// what the cut connection held is all given back.
	value := make([]byte, budget-200)
	for {
		frame := formatter.AppendRequest(nil, produceRequest(9, batchOf(t, value)), 7)
		if len(frame)-4 <= budget-8 {
			break
		}
		value = value[:len(value)-8]
	}
	resp := roundTrip(t, f.dial(t, 1), produceRequest(9, batchOf(t, value)), 9).(*kmsg.ProduceResponse)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
}

// maxInFlight is how many produce requests a Kafka client keeps in flight
// on one connection (max.in.flight.requests.per.connection, idempotent).
const maxInFlight = 5
