package kafka_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaProduceConsumeEveryCodec: kgo produces records with keys,
// headers and timestamps to every partition of a topic of 3 partitions
// with replication factor 3, with each compression codec, and a consumer
// reads every partition from the earliest offset and gets each record
// back whole, one offset per record.
func TestKafkaProduceConsumeEveryCodec(t *testing.T) {
	f := start(t, 3, 3, 3)
	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}
	ts := time.UnixMilli(1_700_000_000_123)
	want := map[string]*kgo.Record{}
	for ci, codec := range codecs {
		cl := f.client(t, kgo.ProducerBatchCompression(codec), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		var recs []*kgo.Record
		for p := int32(0); p < 3; p++ {
			for i := 0; i < 4; i++ {
				key := fmt.Sprintf("c%d-p%d-%d", ci, p, i)
				r := &kgo.Record{Topic: "events", Partition: p, Key: []byte(key), Value: []byte("value of " + key),
					Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(key)}}, Timestamp: ts.Add(time.Duration(i) * time.Millisecond)}
				recs = append(recs, r)
				want[key] = r
			}
		}
		require.NoError(t, cl.ProduceSync(ctx(t), recs...).FirstErr(), "codec %d", ci)
	}

	cons := f.client(t, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]*kgo.Record{}
	next := map[int32]int64{}
	c := ctx(t)
	for len(got) < len(want) {
		fs := cons.PollFetches(c)
		require.NoError(t, c.Err(), "records read: %d of %d", len(got), len(want))
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			require.Equal(t, next[r.Partition], r.Offset, "one offset per record, in order")
			next[r.Partition]++
			got[string(r.Key)] = r
		})
	}
	for key, w := range want {
		g := got[key]
		require.NotNil(t, g, key)
		require.Equal(t, w.Partition, g.Partition)
		require.Equal(t, w.Value, g.Value)
		require.Equal(t, w.Headers, g.Headers)
		require.Equal(t, w.Timestamp.UnixMilli(), g.Timestamp.UnixMilli())
	}
}
