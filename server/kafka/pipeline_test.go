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
}

func (h *heldAnswers) SendQueued(name string, partition int, msgs []topic.Message) cluster.Queued {
	q := h.Local.SendQueued(name, partition, msgs)
	switch partition {
	case 0:
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
