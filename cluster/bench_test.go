package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// benchBrokers is a cluster of 3 started brokers in a temporary
// directory, closed with the benchmark.
func benchBrokers(b *testing.B, opts Options) *Cluster {
	b.Helper()
	c, err := OpenWithOptions(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 3; id++ {
		if _, err := c.StartBroker(id); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// benchCluster is a 3-broker cluster with one single-partition topic of the
// given replication factor.
func benchCluster(b *testing.B, rf int, opts Options) *Producer {
	b.Helper()
	c := benchBrokers(b, opts)
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
//
// The same rounds also run against logtest.BareCommitter over one, two and
// three files in broker-like directories, written in the same order as the
// cluster writes its replicas. That is the disk's ceiling: the most any
// implementation could get from 64 senders and rf fsynced files here. It is
// reported as bare-rf3/bare-rf1, next to rf3/rf1, and rf3-of-ceiling is
// their quotient: how much of what the disk allows the cluster reaches.
func BenchmarkSendRatio(b *testing.B) {
	for _, mode := range []struct {
		name        string
		opts        Options
		leaderFirst bool
	}{{"ordered", Options{}, true}, {"parallel-leader", Options{ParallelLeaderWrite: true}, false}} {
		b.Run(mode.name, func(b *testing.B) {
			const senders, each, rounds = 64, 40, 15
			payload := make([]byte, 100)
			frame := log.AppendFrame(nil, log.Record{Payload: payload})
			sends := map[int]func(done chan error) error{}
			bares := map[int]func(done chan error) error{}
			for _, rf := range []int{1, 2, 3} {
				prod := benchCluster(b, rf, mode.opts)
				sends[rf] = func(chan error) error { _, err := prod.Send(nil, payload); return err }
				g := bareReplicas(b, rf, mode.leaderFirst)
				bares[rf] = func(done chan error) error { return g.Commit(frame, done) }
			}
			round := func(op func(done chan error) error) time.Duration {
				start := time.Now()
				var wg sync.WaitGroup
				for range senders {
					wg.Go(func() {
						done := make(chan error, 1)
						for range each {
							if err := op(done); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				return time.Since(start)
			}
			spent, bareSpent := map[int]time.Duration{}, map[int]time.Duration{}
			for i := 0; i < b.N*rounds; i++ {
				for _, rf := range []int{1, 2, 3} {
					spent[rf] += round(sends[rf])
					bareSpent[rf] += round(bares[rf])
				}
			}
			total := float64(b.N * rounds * senders * each)
			rf3, ceiling := spent[1].Seconds()/spent[3].Seconds(), bareSpent[1].Seconds()/bareSpent[3].Seconds()
			b.ReportMetric(total/spent[1].Seconds(), "rf1-records/s")
			b.ReportMetric(total/spent[3].Seconds(), "rf3-records/s")
			b.ReportMetric(spent[1].Seconds()/spent[2].Seconds(), "rf2/rf1")
			b.ReportMetric(rf3, "rf3/rf1")
			b.ReportMetric(ceiling, "bare-rf3/bare-rf1")
			b.ReportMetric(rf3/ceiling, "rf3-of-ceiling")
		})
	}
}

// bareReplicas is a logtest.BareCommitter over rf files, each in a directory
// of its own, as the brokers' replicas are.
func bareReplicas(b *testing.B, rf int, leaderFirst bool) *logtest.BareCommitter {
	b.Helper()
	root := b.TempDir()
	var files []durable.File
	for i := range rf {
		dir := filepath.Join(root, fmt.Sprintf("broker-%d", i+1))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		f, err := durable.OS.OpenFile(filepath.Join(dir, "bare.bin"), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = f.Close() })
		files = append(files, f)
	}
	g, err := logtest.NewBareCommitter(leaderFirst, files...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Close)
	return g
}

// BenchmarkBareReplicas is the disk alone: one sender committing 100-byte
// records through logtest.BareCommitter over one, two and three fsynced
// files, all in parallel or leader first. ns/op is the time one durable
// write to that many files takes here, with nothing of PyStream's around it:
//
//	go test -run '^$' -bench BenchmarkBareReplicas -benchtime 2s
func BenchmarkBareReplicas(b *testing.B) {
	frame := log.AppendFrame(nil, log.Record{Payload: make([]byte, 100)})
	for _, leaderFirst := range []bool{false, true} {
		for _, files := range []int{1, 2, 3} {
			name := fmt.Sprintf("parallel/files=%d", files)
			if leaderFirst {
				name = fmt.Sprintf("leader-first/files=%d", files)
			}
			b.Run(name, func(b *testing.B) {
				g := bareReplicas(b, files, leaderFirst)
				done := make(chan error, 1)
				for b.Loop() {
					if err := g.Commit(frame, done); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRetentionDiskUse: the steady-state disk use of a topic under a
// constant load with retention.bytes set. One op is a batch of 64
// 100-byte records to a replication-factor-3 partition; a retention pass
// runs every 16 batches, and after each pass every replica's segment files
// are summed on disk. max-bytes/bound is the largest replica seen after a
// pass, divided by retention.bytes plus one segment: the promise is that it
// never passes 1 (docs/phase-1-log.md § Segments and retention). Between
// passes a replica grows by what the load writes in the interval
// (max-before-pass-bytes).
//
//	go test -run '^$' -bench RetentionDiskUse -benchtime 2000x ./cluster/
func BenchmarkRetentionDiskUse(b *testing.B) {
	const (
		segmentBytes   = 64 << 10
		retentionBytes = 256 << 10
		passEvery      = 16
	)
	root := b.TempDir()
	c, err := Open(root)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 3; id++ {
		if _, err := c.StartBroker(id); err != nil {
			b.Fatal(err)
		}
	}
	err = c.CreateTopicWithConfig("bench", 1, 3, map[string]string{
		"segment.bytes": fmt.Sprint(segmentBytes), "retention.bytes": fmt.Sprint(retentionBytes), "retention.ms": "-1"})
	if err != nil {
		b.Fatal(err)
	}
	prod := NewProducer(c, "bench")
	batch := make([]topic.Message, 64)
	for i := range batch {
		batch[i].Payload = make([]byte, 100)
	}
	var worst, before int64
	b.SetBytes(int64(len(batch) * log.FrameSize(100)))
	for i := 0; b.Loop(); i++ {
		if _, err := prod.SendBatchTo(0, batch); err != nil {
			b.Fatal(err)
		}
		if i%passEvery != passEvery-1 {
			continue
		}
		for id := 1; id <= 3; id++ {
			before = max(before, segmentBytesOnDisk(b, ReplicaDir(root, id, "bench", 0)))
		}
		if _, err := c.EnforceRetention(); err != nil {
			b.Fatal(err)
		}
		for id := 1; id <= 3; id++ {
			worst = max(worst, segmentBytesOnDisk(b, ReplicaDir(root, id, "bench", 0)))
		}
	}
	b.ReportMetric(float64(worst), "max-replica-bytes")
	b.ReportMetric(float64(before), "max-before-pass-bytes")
	b.ReportMetric(float64(worst)/float64(retentionBytes+segmentBytes), "max-bytes/bound")
}

// segmentBytesOnDisk sums the sizes of the segment files in dir.
func segmentBytesOnDisk(b *testing.B, dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".log" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			b.Fatal(err)
		}
		n += info.Size()
	}
	return n
}
