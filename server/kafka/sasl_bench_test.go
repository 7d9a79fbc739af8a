package kafka_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/server/auth"
)

// BenchmarkKafkaProduceSASL pairs, in one run, kgo's produce throughput
// over a plaintext listener without an auth file and over TLS with
// SCRAM-SHA-256 (SASL_SSL): one broker, one partition, 16 goroutines each
// producing one 100-byte record at a time with ProduceSync (acks=all),
// every record fsynced. The exchange is once per connection, so the
// difference is TLS's cost per request plus the one SCRAM exchange.
//
//	go test ./server/kafka -run '^$' -bench KafkaProduceSASL -benchtime 20000x
func BenchmarkKafkaProduceSASL(b *testing.B) {
	for _, mode := range []string{"plaintext", "tls-scram-sha-256"} {
		b.Run(mode, func(b *testing.B) {
			var cl *kgo.Client
			opts := []kgo.Opt{kgo.DefaultProduceTopic("events"), kgo.RequiredAcks(kgo.AllISRAcks())}
			if mode == "plaintext" {
				cl = start(b, 1, 1, 1).client(b, opts...)
			} else {
				cl = startSecured(b, true, 1, 1, 1).as(b, auth.MechanismSCRAMSHA256, "writer", opts...)
			}
			payload := make([]byte, 100)
			if err := cl.ProduceSync(ctx(b), &kgo.Record{Value: payload}).FirstErr(); err != nil {
				b.Fatal(err) // a warm-up: connected and authenticated
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 16 {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						if err := cl.ProduceSync(b.Context(), &kgo.Record{Value: payload}).FirstErr(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
