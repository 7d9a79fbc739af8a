package cluster

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pystream/pystream/topic"
)

var prefixRecords = flag.Int("prefix-records", 100_000, "BenchmarkCommonPrefix: records in the compared partition")

// BenchmarkCommonPrefix measures one comparison of a follower with its
// leader over a whole partition (rf 3, 1 KiB records), as catch-up,
// recovery and failover make it: "history" is commonPrefix (the two
// leader-epoch histories, then the last chunk record by record), "records"
// the comparison it replaced (every record read on both, compareRange), in
// one run:
//
//	go test -run '^$' -bench BenchmarkCommonPrefix -benchtime 5x . -args -prefix-records 1000000
func BenchmarkCommonPrefix(b *testing.B) {
	c := benchBrokers(b, Options{})
	if err := c.CreateTopic("bench", 1, 3); err != nil {
		b.Fatal(err)
	}
	fillPartition(b, NewProducer(c, "bench"), *prefixRecords)
	p, pm := benchPartition(b, c)
	follower := pm.Followers()[0]
	end := uint64(*prefixRecords)
	ctx := context.Background()
	for _, mode := range []string{"history", "records"} {
		b.Run(fmt.Sprintf("%s/records=%d", mode, end), func(b *testing.B) {
			for b.Loop() {
				var common uint64
				var err error
				if mode == "history" {
					common, _, err = c.commonPrefix(ctx, p, follower, pm.Leader, end)
				} else {
					common, _, err = c.compareRange(ctx, p, follower, pm.Leader, 0, end)
				}
				if err != nil || common != end {
					b.Fatalf("common prefix %d of %d: %v", common, end, err)
				}
			}
		})
	}
}

// benchPartition is partition 0 of topic "bench" and its metadata.
func benchPartition(b *testing.B, c *Cluster) (*partition, PartitionMetadata) {
	b.Helper()
	p, err := c.partition("bench", 0)
	if err != nil {
		b.Fatal(err)
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		b.Fatal(err)
	}
	return p, pm
}

// fillPartition writes n records of 1 KiB through pr, in batches of
// 1,000.
func fillPartition(b *testing.B, pr *Producer, n int) {
	b.Helper()
	batch := make([]topic.Message, 1000)
	for i := range batch {
		batch[i] = topic.Message{Payload: make([]byte, 1024)}
	}
	for done := 0; done < n; done += len(batch) {
		if _, err := pr.SendBatch(batch[:min(len(batch), n-done)]); err != nil {
			b.Fatal(err)
		}
	}
}

var latencyRecords = flag.Int("latency-records", 100_000, "BenchmarkLatencyDuringCatchUp: records in the full partition")

// catchUpEvery is how often BenchmarkLatencyDuringCatchUp catches the
// follower up: the controller's pass interval (server/controller's
// DefaultInterval).
const catchUpEvery = 50 * time.Millisecond

// BenchmarkLatencyDuringCatchUp measures the latency of single-record
// sends (rf 3) while a follower of the same partition is caught up every
// catchUpEvery, as the controller's passes do: each catch-up compares the
// follower with its leader while the partition's writes wait. It runs on
// an empty partition and on one holding -latency-records records of
// 1 KiB, in one run, and reports each one's p50 and p99:
//
//	go test -run '^$' -bench BenchmarkLatencyDuringCatchUp -benchtime 2000x . -args -latency-records 4000000
func BenchmarkLatencyDuringCatchUp(b *testing.B) {
	for _, n := range []int{0, *latencyRecords} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			c := benchBrokers(b, Options{})
			if err := c.CreateTopic("bench", 1, 3); err != nil {
				b.Fatal(err)
			}
			pr := NewProducer(c, "bench")
			fillPartition(b, pr, n)
			_, pm := benchPartition(b, c)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			catchUps := 0
			wg.Go(func() {
				t := time.NewTicker(catchUpEvery)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case <-t.C:
					}
					if _, err := c.CatchUp("bench", 0, pm.Followers()[0]); err != nil {
						b.Error(err)
						return
					}
					catchUps++
				}
			})
			payload := make([]byte, 1024)
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := pr.Send(nil, payload); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(catchUps), "catch-ups")
		})
	}
}
