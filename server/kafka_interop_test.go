package server

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/server/apiclient"
)

// TestKafkaInteropRecordsAndOffsets: Kafka and HTTP are one stream. A
// record kgo produces with a key and headers is read over HTTP, and a
// record produced over HTTP is read through Kafka; an offset committed
// through Kafka (group id = consumer id) is the consumer's offset over
// HTTP, and one committed over HTTP is fetched through Kafka.
// Keys, headers and the producer's timestamp cross both ways.
func TestKafkaInteropRecordsAndOffsets(t *testing.T) {
	_, r, cl := startKafkaServer(t, "orders", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Kafka in, HTTP out.
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Key: []byte("k1"), Value: []byte("from kafka"),
		Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}}}).FirstErr())
	fetched, err := r.client.Fetch(ctx, "orders", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, fetched.Records, 1)
	got0 := fetched.Records[0]
	require.Equal(t, "from kafka", string(got0.Value))
	require.Equal(t, "k1", string(got0.Key))
	require.Equal(t, []apiclient.RecordHeader{{Key: "trace", Value: []byte("abc")}}, got0.Headers)
	require.NotNil(t, got0.CreateTimestampMS, "the producer's timestamp")

	// HTTP in, Kafka out.
	_, err = r.client.ProduceTo(ctx, "orders", 0, []apiclient.ProduceRecord{{Key: []byte("k2"), Value: []byte("from http"),
		Headers: []apiclient.RecordHeader{{Key: "via", Value: []byte("http")}}}})
	require.NoError(t, err)
	var records []*kgo.Record
	for len(records) < 2 {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "read through kafka: %d records", len(records))
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(rec *kgo.Record) { records = append(records, rec) })
	}
	require.Equal(t, "from kafka", string(records[0].Value))
	require.Equal(t, "from http", string(records[1].Value))
	require.Equal(t, "k2", string(records[1].Key))
	require.Equal(t, []kgo.RecordHeader{{Key: "via", Value: []byte("http")}}, records[1].Headers)

	// Offsets: Kafka in, HTTP out, and back.
	adm := kadm.NewClient(cl)
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 1, LeaderEpoch: -1})
	committed, err := adm.CommitOffsets(ctx, "billing", offs)
	require.NoError(t, err)
	require.NoError(t, committed.Error())
	got, err := r.client.ConsumerOffset(ctx, "billing", "orders", 0)
	require.NoError(t, err)
	require.NotNil(t, got.Offset)
	require.Equal(t, uint64(1), *got.Offset)
	_, err = r.client.CommitOffset(ctx, "billing", "orders", 0, 2)
	require.NoError(t, err)
	back, err := adm.FetchOffsets(ctx, "billing")
	require.NoError(t, err)
	o, ok := back.Lookup("orders", 0)
	require.True(t, ok)
	require.Equal(t, int64(2), o.At)
}
