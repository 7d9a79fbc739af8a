package kafka_test

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// compressedBatch is a record batch of one record per value, its records
// compressed with codec (3 lz4, 4 zstd).
func compressedBatch(t *testing.T, codec int16, values ...[]byte) []byte {
	t.Helper()
	var raw []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: v}
		enc := r.AppendTo(nil)[1:]
		raw = binary.AppendVarint(raw, int64(len(enc)))
		raw = append(raw, enc...)
	}
	var body []byte
	switch codec {
	case 3:
		var b bytes.Buffer
		w := lz4.NewWriter(&b)
		_, err := w.Write(raw)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		body = b.Bytes()
	case 4:
		enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(1<<20))
		require.NoError(t, err)
		body = enc.EncodeAll(raw, nil)
	default:
		t.Fatalf("codec %d", codec)
	}
	n := int32(len(values))
	rb := kmsg.RecordBatch{Length: int32(49 + len(body)), Magic: 2, Attributes: codec, LastOffsetDelta: n - 1,
		FirstTimestamp: 1_700_000_000_000, MaxTimestamp: 1_700_000_000_000, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: n, Records: body}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32c(b[21:]))
	return b
}

// setMaxMessageBytes sets the topic events' max.message.bytes.
func (f *fixture) setMaxMessageBytes(t *testing.T, n int) {
	t.Helper()
	_, err := f.c.AlterTopicConfig("events", map[string]string{topic.MaxMessageBytesKey: strconv.Itoa(n)}, nil)
	require.NoError(t, err)
}

// TestKafkaMaxMessageBytesBoundary: max.message.bytes bounds each record
// batch as sent, header included, compressed when it is: a batch of
// exactly the topic's max.message.bytes is written, one byte more is
// MESSAGE_TOO_LARGE with an ErrorMessage naming the key, and nothing of
// it is written. A compressed batch counts by its compressed size, even
// when its records inflate to many times the limit.
func TestKafkaMaxMessageBytesBoundary(t *testing.T) {
	f := start(t, 1, 1, 1)
	nc := f.dial(t, 1)
	written := uint64(0)
	for _, tc := range []struct {
		name  string
		batch []byte
	}{
		{"uncompressed", batchOf(t, bytes.Repeat([]byte("v"), 3000))},
		{"zstd", compressedBatch(t, 4, bytes.Repeat([]byte("z"), 64<<10), bytes.Repeat([]byte("y"), 64<<10))},
		{"lz4", compressedBatch(t, 3, bytes.Repeat([]byte("l"), 64<<10))},
	} {
		size := len(tc.batch)
		f.setMaxMessageBytes(t, size-1)
		resp := roundTrip(t, nc, produceRequest(9, tc.batch), 9).(*kmsg.ProduceResponse)
		rp := resp.Topics[0].Partitions[0]
		require.Equal(t, kerr.MessageTooLarge.Code, rp.ErrorCode, "%s: %d bytes, one over", tc.name, size)
		require.NotNil(t, rp.ErrorMessage, tc.name)
		require.Contains(t, *rp.ErrorMessage, "max.message.bytes", tc.name)
		require.Contains(t, *rp.ErrorMessage, strconv.Itoa(size), tc.name)
		_, hwm, err := f.c.Bounds("events", 0)
		require.NoError(t, err)
		require.Equal(t, written, hwm, "%s: nothing written", tc.name)

		f.setMaxMessageBytes(t, size)
		resp = roundTrip(t, nc, produceRequest(9, tc.batch), 9).(*kmsg.ProduceResponse)
		rp = resp.Topics[0].Partitions[0]
		require.Zero(t, rp.ErrorCode, "%s: %d bytes, exactly the limit", tc.name, size)
		require.Equal(t, int64(written), rp.BaseOffset, tc.name)
		_, hwm, err = f.c.Bounds("events", 0)
		require.NoError(t, err)
		require.Greater(t, hwm, written, tc.name)
		written = hwm
	}
}

// TestKafkaMaxMessageBytesKgo: kgo producers see the topic's
// max.message.bytes on their batches: a record whose batch is one byte
// under or at the limit is written, one byte over is
// kerr.MessageTooLarge; with zstd or lz4 a batch whose records are far
// above the limit but compress under it is written, and one that does
// not compress under it is refused.
func TestKafkaMaxMessageBytesKgo(t *testing.T) {
	f := start(t, 1, 1, 1)
	const limit = 4096
	f.setMaxMessageBytes(t, limit)
	plain := f.client(t, kgo.DefaultProduceTopic("events"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedRecords(1))
	// A batch of one record without key or headers is the 61-byte header
	// and the record: its length varint, attributes, timestamp delta,
	// offset delta, key length -1, value length and value, no headers.
	batchSize := func(value int) int {
		r := kmsg.Record{Value: make([]byte, value)}
		body := r.AppendTo(nil)[1:]
		return 61 + len(binary.AppendVarint(nil, int64(len(body)))) + len(body)
	}
	value := limit - 61
	for batchSize(value) > limit {
		value--
	}
	require.Equal(t, limit, batchSize(value), "a value whose batch is exactly the limit")
	for _, tc := range []struct {
		value int
		err   error
	}{{value - 1, nil}, {value, nil}, {value + 1, kerr.MessageTooLarge}} {
		err := plain.ProduceSync(ctx(t), &kgo.Record{Value: bytes.Repeat([]byte("p"), tc.value)}).FirstErr()
		if tc.err == nil {
			require.NoError(t, err, "a batch of %d bytes", batchSize(tc.value))
		} else {
			require.ErrorIs(t, err, tc.err, "a batch of %d bytes", batchSize(tc.value))
		}
	}
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(2), hwm)

	noise := make([]byte, 2*limit)
	_, _ = rand.Read(noise)
	for _, codec := range []kgo.CompressionCodec{kgo.ZstdCompression(), kgo.Lz4Compression()} {
		cl := f.client(t, kgo.DefaultProduceTopic("events"), kgo.ProducerBatchCompression(codec))
		require.NoError(t, cl.ProduceSync(ctx(t), &kgo.Record{Value: bytes.Repeat([]byte("c"), 16*limit)}).FirstErr(),
			"compressible: 64 KiB of records in a batch far under 4 KiB")
		err := cl.ProduceSync(ctx(t), &kgo.Record{Value: noise}).FirstErr()
		require.ErrorIs(t, err, kerr.MessageTooLarge, "incompressible: the batch stays over the limit")
	}
	_, hwm, err = f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(4), hwm)
}

// TestKafkaMaxMessageBytesStorageCeiling: a topic's max.message.bytes
// above the log's per-record limit does not lift it: a batch under
// max.message.bytes holding one record above the log's limit is
// MESSAGE_TOO_LARGE, its message naming the per-record limit.
func TestKafkaMaxMessageBytesStorageCeiling(t *testing.T) {
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.MaxRequestBytes = 4 << 20 })
	f.setMaxMessageBytes(t, 3<<20)
	big := bytes.Repeat([]byte("x"), 1<<20+1)
	resp := roundTrip(t, f.dial(t, 1), produceRequest(9, batchOf(t, big)), 9).(*kmsg.ProduceResponse)
	rp := resp.Topics[0].Partitions[0]
	require.Equal(t, kerr.MessageTooLarge.Code, rp.ErrorCode)
	require.NotNil(t, rp.ErrorMessage)
	require.Contains(t, *rp.ErrorMessage, "per-record limit")
}

// TestKafkaCreateTopicsMessageKeys: kadm creates a topic with
// max.message.bytes and message.timestamp.type, which the topic then has
// and which CreateTopics' answer and DescribeConfigs show; bad values are
// INVALID_CONFIG naming the key, and create nothing; AlterConfigs changes
// them.
func TestKafkaCreateTopicsMessageKeys(t *testing.T) {
	f := start(t, 1, 1, 1)
	adm := f.admin(t)
	res, err := adm.CreateTopic(ctx(t), 1, 1, map[string]*string{"max.message.bytes": kmsg.StringPtr("2048"),
		"message.timestamp.type": kmsg.StringPtr("LogAppendTime")}, "orders")
	require.NoError(t, err)
	require.NoError(t, res.Err)
	cfg, err := f.c.TopicConfig("orders")
	require.NoError(t, err)
	require.Equal(t, int64(2048), cfg.MaxMessageBytes)
	require.Equal(t, topic.TimestampLogAppendTime, cfg.MessageTimestampType)

	rcs, err := adm.DescribeTopicConfigs(ctx(t), "orders")
	require.NoError(t, err)
	got := configsByKey(rcs[0])
	require.Equal(t, "2048", *got["max.message.bytes"].Value)
	require.Equal(t, kmsg.ConfigSourceDynamicTopicConfig, got["max.message.bytes"].Source)
	require.Equal(t, "LogAppendTime", *got["message.timestamp.type"].Value)

	for _, bad := range []map[string]*string{
		{"max.message.bytes": kmsg.StringPtr("-1")},
		{"max.message.bytes": kmsg.StringPtr("2147483648")},
		{"message.timestamp.type": kmsg.StringPtr("logappendtime")},
	} {
		all, err := adm.CreateTopics(ctx(t), 1, 1, bad, "t1")
		require.NoError(t, err)
		require.ErrorIs(t, all["t1"].Err, kerr.InvalidConfig, "%v", bad)
		for k := range bad {
			require.Contains(t, all["t1"].ErrMessage, k)
		}
	}
	_, err = f.c.Topic("t1")
	require.Error(t, err, "nothing created")

	ars, err := adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("message.timestamp.type", "CreateTime"), set("max.message.bytes", "1048588")}, "orders")
	require.NoError(t, err)
	require.NoError(t, ars[0].Err)
	require.Equal(t, map[string]string{"message.timestamp.type": "CreateTime", "max.message.bytes": "1048588"}, f.overrides(t, "orders"))
	ars, err = adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("message.timestamp.type", "Now")}, "orders")
	require.NoError(t, err)
	require.ErrorIs(t, ars[0].Err, kerr.InvalidConfig)
	require.Contains(t, ars[0].ErrMessage, "CreateTime or LogAppendTime")
}
