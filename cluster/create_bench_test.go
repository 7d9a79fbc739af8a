package cluster

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkSendDuringCreate measures the promise of docs/design.md § Creating a topic (no stall):
// the latency of acknowledged sends to one topic (1 partition, rf 3) while
// another topic of 1024 partitions × rf 3 is created, paired in every
// iteration with the same sends when nothing else happens. Each iteration
// sends 200 records alone, then sends until the creation returns, then
// deletes the big topic. Compare baseline-p99-ms with during-p99-ms:
//
//	go test -run '^$' -bench BenchmarkSendDuringCreate -benchtime 3x
func BenchmarkSendDuringCreate(b *testing.B) {
	const bigPartitions, alone = 1024, 200
	c := benchBrokers(b, Options{MaxOpenLogs: -1})
	if err := c.CreateTopic("orders", 1, 3); err != nil {
		b.Fatal(err)
	}
	prod := NewProducer(c, "orders")
	send := func() time.Duration {
		start := time.Now()
		if _, err := prod.Send([]byte("k"), make([]byte, 100)); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var baseline, during []time.Duration
	var creating time.Duration
	for b.Loop() {
		for range alone {
			baseline = append(baseline, send())
		}
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- c.CreateTopic("big", bigPartitions, 3) }()
	sending:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				break sending
			default:
				during = append(during, send())
			}
		}
		creating += time.Since(start)
		if _, err := c.DeleteTopic("big"); err != nil {
			b.Fatal(err)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(baseline, 0.99)), "baseline-p99-ms")
	b.ReportMetric(ms(percentile(during, 0.99)), "during-p99-ms")
	b.ReportMetric(ms(slices.Max(during)), "during-max-ms")
	b.ReportMetric(float64(len(during))/float64(b.N), "sends-during/op")
	b.ReportMetric(creating.Seconds()/float64(b.N), "create-s/op")
}

// percentile returns the q-quantile (0..1) of ds, by nearest rank.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
