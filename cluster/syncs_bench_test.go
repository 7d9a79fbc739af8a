package cluster

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// BenchmarkSyncsPaired measures the replicas' shared syncs of the file
// system (the default, docs/design.md § One sync for many partitions)
// against one fsync per file (BrokerOptions.Sync = durable.File.Sync), in
// one run: 64 senders, one 100-byte record at a time, rf 3, spread
// round-robin over 3 partitions and over 1,000, the four clusters' rounds
// interleaved so that the disk's drift touches each alike. It reports
// each rate, shared/file at 3 partitions (what sharing costs where there
// was little to share) and at 1,000, and 1,000/3 for each. The storage
// path alone: no protocol, no client.
//
//	go test -run '^$' -bench BenchmarkSyncsPaired -benchtime 1x
func BenchmarkSyncsPaired(b *testing.B) {
	const senders, each, rounds = 64, 20, 8
	type setup struct {
		name       string
		partitions int
		file       bool
		journal    bool
	}
	setups := []setup{{"shared-p3", 3, false, false}, {"file-p3", 3, true, false}, {"shared-p1000", 1000, false, false}, {"file-p1000", 1000, true, false},
		{"journal-p3", 3, false, true}, {"journal-p1000", 1000, false, true}}
	payload := []byte("a record of a hundred bytes, mostly repeated: 0123456789 0123456789 0123456789 0123456789 01234")
	send := map[string]func() error{}
	for _, s := range setups {
		opts := Options{}
		if s.file {
			opts.Broker.Sync = durable.File.Sync
		}
		opts.Broker.Journal = s.journal
		c := benchBrokers(b, opts)
		if !s.file && !s.journal && !c.SyncsShared() {
			b.Skip("the temporary directory's file system does not allow a shared sync")
		}
		if err := c.CreateTopic("bench", s.partitions, 3); err != nil {
			b.Fatal(err)
		}
		prod := NewProducer(c, "bench")
		var next atomic.Int64
		n := int64(s.partitions)
		send[s.name] = func() error {
			_, err := prod.SendBatchTo(int(next.Add(1)%n), []topic.Message{{Payload: payload}})
			return err
		}
	}
	round := func(op func() error) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for range senders {
			wg.Go(func() {
				for range each {
					if err := op(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	for _, s := range setups {
		round(send[s.name]) // warm: every replica opened
	}
	spent := map[string]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N*rounds; i++ {
		for _, s := range setups {
			spent[s.name] += round(send[s.name])
		}
	}
	total := float64(b.N * rounds * senders * each)
	rate := func(name string) float64 { return total / spent[name].Seconds() }
	for _, s := range setups {
		b.ReportMetric(rate(s.name), s.name+"-records/s")
	}
	b.ReportMetric(rate("shared-p3")/rate("file-p3"), "shared/file-p3")
	b.ReportMetric(rate("shared-p1000")/rate("file-p1000"), "shared/file-p1000")
	b.ReportMetric(rate("shared-p1000")/rate("shared-p3"), "shared-p1000/p3")
	b.ReportMetric(rate("file-p1000")/rate("file-p3"), "file-p1000/p3")
	b.ReportMetric(rate("journal-p1000")/rate("journal-p3"), "journal-p1000/p3")
	b.ReportMetric(rate("journal-p3")/rate("shared-p3"), "journal/shared-p3")
}
