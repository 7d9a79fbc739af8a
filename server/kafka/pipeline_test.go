package kafka_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
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
