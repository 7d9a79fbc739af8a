package kafka_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/kafka"
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
