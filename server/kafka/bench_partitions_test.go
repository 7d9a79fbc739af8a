package kafka_test

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/kafka"
)

// BenchmarkKafkaProduceZstdPartitions is one kgo client producing zstd
// batches to 16 partitions of one broker: each op is one ProduceSync of 16
// × 64 records of 100 bytes, one batch per partition, so one produce
// request decodes 16 zstd batches. storage writes them to the embedded
// cluster (an fsync per partition); no-storage answers at once, leaving
// the decoding and the protocol alone. It measures what bounding how many
// partitions of a request decode at once costs.
//
//	go test ./server/kafka -run '^$' -bench KafkaProduceZstdPartitions -count 3
func BenchmarkKafkaProduceZstdPartitions(b *testing.B) {
	const partitions, perPartition = 16, 64
	for _, mode := range []string{"storage", "no-storage"} {
		b.Run(mode, func(b *testing.B) {
			var wrap func(kafka.Cluster) kafka.Cluster
			if mode == "no-storage" {
				wrap = func(kc kafka.Cluster) kafka.Cluster { return &discard{Local: kc.(*backend.Local)} }
			}
			f := startOver(b, wrap, 1, partitions, 1)
			cl, err := kgo.NewClient(kgo.SeedBrokers(f.srv.Addr(1)), kgo.DefaultProduceTopic("events"),
				kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.ZstdCompression()),
				kgo.MaxBufferedRecords(partitions*perPartition))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			value := []byte("a record value of a hundred bytes, mostly repeated: 0123456789 0123456789 0123456789 0123456789.")
			recs := make([]*kgo.Record, 0, partitions*perPartition)
			for i := range partitions * perPartition {
				recs = append(recs, &kgo.Record{Value: value, Partition: int32(i % partitions)})
			}
			ctx := context.Background()
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*partitions*perPartition)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
