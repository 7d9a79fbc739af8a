package kafka_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/topic"
)

// createTime is the old create time the producers of these tests give
// their records: far from any append time.
var createTime = time.UnixMilli(1_600_000_000_000)

// appendTimes is each stored record's append time (ms) of events/0 from
// offset 0, as PyStream's log keeps it.
func (f *fixture) appendTimes(t *testing.T, n int) []int64 {
	t.Helper()
	recs, err := f.c.ReadCommitted("events", 0, 0, n)
	require.NoError(t, err)
	require.Len(t, recs, n)
	out := make([]int64, n)
	for i, r := range recs {
		out[i] = r.Timestamp / int64(time.Millisecond)
	}
	return out
}

// consumeKgo reads n records of events/0 from the start with kgo.
func (f *fixture) consumeKgo(t *testing.T, n int) []*kgo.Record {
	t.Helper()
	cons := f.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"events": {0: kgo.NewOffset().AtStart()}}))
	var got []*kgo.Record
	c := ctx(t)
	for len(got) < n {
		fs := cons.PollFetches(c)
		require.NoError(t, c.Err(), "records read: %d of %d", len(got), n)
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		got = append(got, fs.Records()...)
	}
	return got
}

// TestKafkaLogAppendTimeKgo: on a topic whose message.timestamp.type is
// LogAppendTime, records kgo produces with an old create time come back
// with the broker's append time as their timestamp and LogAppendTime as
// its type (the batch's attribute), each record the time of its own
// append, records appended apart in batches apart; a raw produce answer
// carries the append time. Back to CreateTime, the same records read with
// their producers' create time, and a produce answers LogAppendTime -1.
func TestKafkaLogAppendTimeKgo(t *testing.T) {
	f := start(t, 1, 1, 1)
	_, err := f.c.AlterTopicConfig("events", map[string]string{topic.MessageTimestampTypeKey: topic.TimestampLogAppendTime}, nil)
	require.NoError(t, err)
	prod := f.client(t, kgo.DefaultProduceTopic("events"))
	before := time.Now().UnixMilli()
	// Records appended one by one until two appends have different
	// times (each produce is an fsync: the second almost always).
	n := 0
	for {
		require.NoError(t, prod.ProduceSync(ctx(t), &kgo.Record{Value: []byte("v" + strconv.Itoa(n)), Timestamp: createTime}).FirstErr())
		n++
		times := f.appendTimes(t, n)
		if times[0] != times[n-1] || n == 100 {
			break
		}
	}
	after := time.Now().UnixMilli()
	stored := f.appendTimes(t, n)
	require.NotEqual(t, stored[0], stored[n-1], "two appends a millisecond apart at least")

	got := f.consumeKgo(t, n)
	for i, r := range got[:n] {
		require.Equal(t, int64(i), r.Offset)
		require.Equal(t, int8(1), r.Attrs.TimestampType(), "record %d: LogAppendTime", i)
		require.Equal(t, stored[i], r.Timestamp.UnixMilli(), "record %d: its own append time", i)
		require.GreaterOrEqual(t, r.Timestamp.UnixMilli(), before)
		require.LessOrEqual(t, r.Timestamp.UnixMilli(), after)
	}

	// The produce answer's LogAppendTime is the append time.
	nc := f.dial(t, 1)
	resp := roundTrip(t, nc, produceRequest(9, batchOf(t, []byte("raw"))), 9).(*kmsg.ProduceResponse)
	rp := resp.Topics[0].Partitions[0]
	require.Zero(t, rp.ErrorCode)
	require.Equal(t, int64(n), rp.BaseOffset)
	require.Equal(t, f.appendTimes(t, n+1)[n], rp.LogAppendTime)

	// CreateTime again: the producers' times, and no LogAppendTime.
	_, err = f.c.AlterTopicConfig("events", nil, []string{topic.MessageTimestampTypeKey})
	require.NoError(t, err)
	got = f.consumeKgo(t, n+1)
	for i, r := range got[:n] {
		require.Equal(t, int8(0), r.Attrs.TimestampType(), "record %d: CreateTime", i)
		require.Equal(t, createTime.UnixMilli(), r.Timestamp.UnixMilli(), "record %d", i)
	}
	resp = roundTrip(t, nc, produceRequest(9, batchOf(t, []byte("raw"))), 9).(*kmsg.ProduceResponse)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
	require.Equal(t, int64(-1), resp.Topics[0].Partitions[0].LogAppendTime)
}

// TestKafkaLogAppendTimeSarama: sarama, reading a LogAppendTime topic,
// sees each record's append time, not its producer's create time.
func TestKafkaLogAppendTimeSarama(t *testing.T) {
	f := start(t, 1, 1, 1)
	_, err := f.c.AlterTopicConfig("events", map[string]string{topic.MessageTimestampTypeKey: topic.TimestampLogAppendTime}, nil)
	require.NoError(t, err)
	cl := f.saramaClient(t)
	prod, err := sarama.NewSyncProducerFromClient(cl)
	require.NoError(t, err)
	defer func() { _ = prod.Close() }()
	_, _, err = prod.SendMessage(&sarama.ProducerMessage{Topic: "events", Partition: 0, Value: sarama.StringEncoder("v"), Timestamp: createTime})
	require.NoError(t, err)
	stored := f.appendTimes(t, 1)

	cons, err := sarama.NewConsumerFromClient(cl)
	require.NoError(t, err)
	defer func() { _ = cons.Close() }()
	pc, err := cons.ConsumePartition("events", 0, sarama.OffsetOldest)
	require.NoError(t, err)
	defer func() { _ = pc.Close() }()
	select {
	case m := <-pc.Messages():
		require.Equal(t, stored[0], m.Timestamp.UnixMilli(), "the append time")
		require.NotEqual(t, createTime.UnixMilli(), m.Timestamp.UnixMilli())
	case err := <-pc.Errors():
		t.Fatalf("consume: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not consumed")
	}
}
