package cluster

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pystream/pystream/topic"
)

// benchCluster is a 3-broker cluster with one single-partition topic of the
// given replication factor.
func benchCluster(b *testing.B, rf int, opts Options) *Producer {
	b.Helper()
	root := b.TempDir()
	c, err := OpenWithOptions(root, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 3; id++ {
		if _, err := c.StartBroker(id); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.CreateTopic("bench", 1, rf); err != nil {
		b.Fatal(err)
	}
	return NewProducer(c, "bench")
}

// BenchmarkSend measures acknowledged replicated sends (every active replica
// fsync-ed) for rf 1, 2, 3 with 1 and 64 concurrent senders on one
// partition. Compare records/s of rf 2 and 3 with rf 1 at equal senders:
//
//	go test -run '^$' -bench BenchmarkSend -benchtime 2s
func BenchmarkSend(b *testing.B) {
	benchSend(b, Options{})
}

// BenchmarkSendParallelLeader is BenchmarkSend with
// Options.ParallelLeaderWrite: the leader's fsync overlaps the followers'.
func BenchmarkSendParallelLeader(b *testing.B) {
	benchSend(b, Options{ParallelLeaderWrite: true})
}

func benchSend(b *testing.B, opts Options) {
	payload := make([]byte, 100)
	for _, senders := range []int{1, 64} {
		for _, rf := range []int{1, 2, 3} {
			b.Run(fmt.Sprintf("senders=%d/rf=%d", senders, rf), func(b *testing.B) {
				prod := benchCluster(b, rf, opts)
				b.SetBytes(int64(len(payload)))
				b.ReportAllocs()
				b.ResetTimer()
				if senders == 1 {
					for i := 0; i < b.N; i++ {
						if _, err := prod.Send(nil, payload); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism((senders + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if _, err := prod.Send(nil, payload); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}

// BenchmarkSendBatch measures one sender sending batches of 100 records:
// one fsync per replica per batch.
func BenchmarkSendBatch(b *testing.B) {
	msgs := make([]topic.Message, 100)
	for i := range msgs {
		msgs[i] = topic.Message{Payload: make([]byte, 100)}
	}
	for _, rf := range []int{1, 3} {
		b.Run(fmt.Sprintf("rf=%d", rf), func(b *testing.B) {
			prod := benchCluster(b, rf, Options{})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := prod.SendBatch(msgs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(msgs))/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkSendRatio measures rf 2 and rf 3 against rf 1 with 64 concurrent
// senders, interleaving short rounds of each so that a noisy machine affects
// all of them alike, and reports the throughput ratios (target for rf 3:
// >= 0.6). Run it with -benchtime 1x:
//
//	go test -run '^$' -bench BenchmarkSendRatio -benchtime 1x
func BenchmarkSendRatio(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts Options
	}{{"ordered", Options{}}, {"parallel-leader", Options{ParallelLeaderWrite: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			const senders, each, rounds = 64, 40, 6
			prods := map[int]*Producer{}
			for _, rf := range []int{1, 2, 3} {
				prods[rf] = benchCluster(b, rf, mode.opts)
			}
			spent := map[int]time.Duration{}
			payload := make([]byte, 100)
			for i := 0; i < b.N*rounds; i++ {
				for _, rf := range []int{1, 2, 3} {
					start := time.Now()
					var wg sync.WaitGroup
					for s := 0; s < senders; s++ {
						wg.Go(func() {
							for k := 0; k < each; k++ {
								if _, err := prods[rf].Send(nil, payload); err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
					spent[rf] += time.Since(start)
				}
			}
			total := float64(b.N * rounds * senders * each)
			b.ReportMetric(total/spent[1].Seconds(), "rf1-records/s")
			b.ReportMetric(total/spent[3].Seconds(), "rf3-records/s")
			b.ReportMetric(spent[1].Seconds()/spent[2].Seconds(), "rf2/rf1")
			b.ReportMetric(spent[1].Seconds()/spent[3].Seconds(), "rf3/rf1")
		})
	}
}
