package kafka_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka"
)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// dial opens a raw connection to broker id's listener.
func (f *fixture) dial(t *testing.T, id int) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", f.srv.Addr(id), 2*time.Second)
	require.NoError(t, err)
	require.NoError(t, nc.SetDeadline(time.Now().Add(5*time.Second)))
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// roundTrip sends req at its version and decodes the answer into a
// response of resVersion.
func roundTrip(t *testing.T, nc net.Conn, req kmsg.Request, resVersion int16) kmsg.Response {
	t.Helper()
	// Each exchange has its own deadline, so that a test's work between
	// two of them (building a large batch on a loaded machine) does not
	// eat into the next one's.
	require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := nc.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, 7))
	require.NoError(t, err)
	body := readFrame(t, nc)
	require.Equal(t, int32(7), int32(binary.BigEndian.Uint32(body)), "the correlation id comes back")
	resp := req.ResponseKind()
	resp.SetVersion(resVersion)
	body = body[4:]
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		require.Equal(t, byte(0), body[0], "no header tags")
		body = body[1:]
	}
	require.NoError(t, resp.ReadFrom(body))
	return resp
}

// readFrame reads one response frame from nc and returns it without its
// size: the correlation id first.
func readFrame(t *testing.T, nc net.Conn) []byte {
	t.Helper()
	var size [4]byte
	_, err := io.ReadFull(nc, size[:])
	require.NoError(t, err)
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err = io.ReadFull(nc, body)
	require.NoError(t, err)
	return body
}

// requireClosed asserts the server closes nc without answering.
func requireClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	var b [1]byte
	_, err := nc.Read(b[:])
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server closed the connection")
	require.Error(t, err)
}

// TestKafkaRawBadFrames pins the request reader's refusals: a size prefix
// above the limit, a truncated frame, an unknown API key and a key the
// listener does not serve close the connection without an answer, and
// the listener serves the next connection.
func TestKafkaRawBadFrames(t *testing.T) {
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.MaxRequestBytes = 4096 })
	for name, frame := range map[string][]byte{
		"size above the limit":            {0, 0, 0x10, 0x01},
		"negative size":                   {0xff, 0xff, 0xff, 0xff},
		"truncated frame":                 {0, 0, 0, 100, 0, 18, 0, 0},
		"short header":                    {0, 0, 0, 4, 0, 18, 0, 0},
		"unknown API key":                 {0, 0, 0, 10, 0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0xff, 0xff},
		"AddPartitionsToTxn":              {0, 0, 0, 10, 0, 24, 0, 0, 0, 0, 0, 1, 0xff, 0xff},
		"version the codec does not know": {0, 0, 0, 10, 0, 0, 0x7f, 0, 0, 0, 0, 1, 0xff, 0xff},
	} {
		nc := f.dial(t, 1)
		_, err := nc.Write(frame)
		require.NoError(t, err, name)
		if name == "truncated frame" {
			require.NoError(t, nc.(*net.TCPConn).CloseWrite())
		}
		requireClosed(t, nc)
	}
	// Still serving.
	resp := roundTrip(t, f.dial(t, 1), &kmsg.ApiVersionsRequest{Version: 0}, 0).(*kmsg.ApiVersionsResponse)
	require.Zero(t, resp.ErrorCode)
}

// TestKafkaRawApiVersionsNewer: an ApiVersions request newer than v3 gets
// the v0 answer with UNSUPPORTED_VERSION (35) and the key list, as a
// broker gives it, so a client retries with a version it sees there.
func TestKafkaRawApiVersionsNewer(t *testing.T) {
	f := start(t, 1, 1, 1)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 4
	req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1"
	resp := roundTrip(t, f.dial(t, 1), req, 0).(*kmsg.ApiVersionsResponse)
	require.Equal(t, kerr.UnsupportedVersion.Code, resp.ErrorCode)
	got := map[int16][2]int16{}
	for _, k := range resp.ApiKeys {
		got[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	require.Equal(t, map[int16][2]int16{0: {3, 9}, 1: {4, 12}, 2: {1, 7}, 3: {0, 12}, 18: {0, 3}, 22: {0, 4},
		8: {0, 8}, 9: {0, 8}, 10: {0, 4}, 19: {2, 7}, 20: {0, 6}, 21: {0, 2}, 23: {0, 4},
		11: {0, 9}, 14: {0, 5}, 12: {0, 4}, 13: {0, 5}, 15: {0, 5}, 16: {0, 5},
		24: {0, 3}, 25: {0, 3}, 26: {0, 3}, 28: {0, 3}, 32: {0, 4}, 33: {0, 2}, 35: {0, 4}, 37: {0, 3}, 42: {0, 2}, 43: {0, 2}, 44: {0, 1}, 47: {0, 0}, 65: {0, 0}, 66: {0, 1}, 60: {0, 1}}, got)
}

// TestKafkaRawUnsupportedVersion: a Produce v2 (below the served v3-v9)
// is answered UNSUPPORTED_VERSION for each partition, and writes nothing.
func TestKafkaRawUnsupportedVersion(t *testing.T) {
	f := start(t, 1, 1, 1)
	req := produceRequest(2, goodBatch(t))
	resp := roundTrip(t, f.dial(t, 1), req, 2).(*kmsg.ProduceResponse)
	require.Equal(t, kerr.UnsupportedVersion.Code, resp.Topics[0].Partitions[0].ErrorCode)
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Zero(t, hwm)
}

// TestKafkaRawCorruptBatch: a partition whose batches include one with a
// wrong CRC-32C is CORRUPT_MESSAGE, and none of its records (not even
// those of the valid batch before it) is written; the valid batch alone
// is.
func TestKafkaRawCorruptBatch(t *testing.T) {
	f := start(t, 1, 1, 1)
	nc := f.dial(t, 1)
	good := goodBatch(t)
	bad := goodBatch(t)
	bad[len(bad)-1] ^= 0xff
	resp := roundTrip(t, nc, produceRequest(9, append(append([]byte{}, good...), bad...)), 9).(*kmsg.ProduceResponse)
	require.Equal(t, kerr.CorruptMessage.Code, resp.Topics[0].Partitions[0].ErrorCode)
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Zero(t, hwm, "nothing written")

	resp = roundTrip(t, nc, produceRequest(9, good), 9).(*kmsg.ProduceResponse)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
	_, hwm, err = f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(2), hwm, "one offset per record")
}

// goodBatch is a valid uncompressed batch of two records.
func goodBatch(t *testing.T) []byte {
	t.Helper()
	var recs []byte
	for i, v := range []string{"a", "b"} {
		r := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Key: []byte("k"), Value: []byte(v)}
		enc := r.AppendTo(nil)[1:]
		recs = binary.AppendVarint(recs, int64(len(enc)))
		recs = append(recs, enc...)
	}
	rb := kmsg.RecordBatch{Length: int32(49 + len(recs)), Magic: 2, LastOffsetDelta: 1, FirstTimestamp: 1_700_000_000_000,
		MaxTimestamp: 1_700_000_000_001, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 2, Records: recs}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32c(b[21:]))
	return b
}

// produceRequest is an acks=all produce of records to events/0.
func produceRequest(version int16, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, -1, 5000
	p := kmsg.NewProduceRequestTopicPartition()
	p.Partition, p.Records = 0, records
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic, tp.Partitions = "events", []kmsg.ProduceRequestTopicPartition{p}
	req.Topics = []kmsg.ProduceRequestTopic{tp}
	return req
}

// TestKafkaRawSlowLoris: a client that sends a size prefix and half the
// frame it announces is disconnected once Config.FrameTimeout has passed
// since the prefix, and the listener serves the next connection.
func TestKafkaRawSlowLoris(t *testing.T) {
	const frameTimeout = 200 * time.Millisecond
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.FrameTimeout = frameTimeout })
	nc := f.dial(t, 1)
	start := time.Now()
	_, err := nc.Write([]byte{0, 0, 0, 20, 0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff})
	require.NoError(t, err)
	requireClosed(t, nc)
	elapsed := time.Since(start)
	require.GreaterOrEqual(t, elapsed, frameTimeout-10*time.Millisecond)
	require.Less(t, elapsed, 3*time.Second)

	resp := roundTrip(t, f.dial(t, 1), &kmsg.ApiVersionsRequest{Version: 0}, 0).(*kmsg.ApiVersionsResponse)
	require.Zero(t, resp.ErrorCode)
}
