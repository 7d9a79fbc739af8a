package kafka_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// BenchmarkKafkaProduceCycle splits one kgo produce cycle into its parts,
// paired in one run, on 3 partitions whose leaders are 3 brokers of their
// own, 64 goroutines each producing one 100-byte record at a time with
// ProduceSync (acks=all, default batching), as peerbench's kgo row does:
//
//   - storage: the listener over the embedded cluster, every record
//     fsynced before it is acknowledged, kgo with its defaults: an
//     idempotent producer, five produce requests in flight per broker;
//   - storage-plain: the same with idempotence off (kgo.
//     DisableIdempotentWrite), one request in flight per broker;
//   - no-storage: the same listener over the same cluster whose Send
//     answers at once and keeps nothing: the client, the loopback and the
//     protocol front end alone;
//   - bare-fsync: logtest.BareCommitter, one per partition, fed one batch
//     at a time of the size the storage row's requests carried: the disk
//     alone at that batching.
//
// Without idempotence kgo keeps one produce request in flight per
// broker, so a request's cycle
// is what the client and front end take plus what the disk takes, one
// after the other; us/cycle is that cycle per broker, us/send the part of
// it spent in Cluster.Send (the append and its fsync). The most any server
// reaches against the bare ceiling at this batching is therefore
// bare-fsync's us/cycle over (no-storage's + bare-fsync's).
//
//	go test ./server/kafka -run '^$' -bench KafkaProduceCycle -benchtime 30000x
func BenchmarkKafkaProduceCycle(b *testing.B) {
	const partitions = 3
	var batch atomic.Int64 // records per request of the storage row
	for _, mode := range []string{"storage", "storage-plain", "no-storage"} {
		b.Run(mode, func(b *testing.B) {
			c, err := cluster.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			for id := 1; id <= partitions; id++ {
				if _, err := c.StartBroker(id); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.CreateTopic("events", partitions, 1); err != nil {
				b.Fatal(err)
			}
			tm := &timedSend{Local: embedded(c)}
			var kc kafka.Cluster = tm
			if mode == "no-storage" {
				kc = &discard{Local: embedded(c)}
			}
			var opts []kgo.Opt
			if mode != "storage" {
				opts = append(opts, kgo.DisableIdempotentWrite())
			}
			records, requests := produceLoad(b, kc, opts...)
			per := float64(records) / float64(requests)
			if mode == "storage" {
				batch.Store(max(1, int64(per+0.5)))
			}
			b.ReportMetric(per, "records/request")
			if mode != "no-storage" {
				b.ReportMetric(float64(tm.ns.Load())/1000/float64(max(tm.n.Load(), 1)), "us/send")
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())*partitions/float64(requests), "us/cycle")
		})
	}
	b.Run("bare-fsync", func(b *testing.B) {
		n := max(batch.Load(), 1)
		frame := []byte{}
		for range n {
			frame = log.AppendFrame(frame, log.Record{Payload: make([]byte, 100)})
		}
		dir := b.TempDir()
		var wg sync.WaitGroup
		var left atomic.Int64
		left.Store(int64(b.N))
		b.ResetTimer()
		for p := range partitions {
			f, err := durable.OS.OpenFile(filepath.Join(dir, fmt.Sprintf("p%d", p)), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			g, err := logtest.NewBareCommitter(true, f)
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			wg.Go(func() {
				done := make(chan error, 1)
				for left.Add(-n) > -n {
					if err := g.Commit(frame, done); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		cycles := (int64(b.N) + n - 1) / n
		b.ReportMetric(float64(n), "records/request")
		b.ReportMetric(float64(b.Elapsed().Microseconds())*partitions/float64(cycles), "us/cycle")
	})
}

// produceLoad produces b.N records into "events" through a listener over
// kc from 64 goroutines, and returns the records and produce requests kgo
// counted.
func produceLoad(b *testing.B, kc kafka.Cluster, opts ...kgo.Opt) (records, requests int64) {
	srv, err := kafka.New(kc, kafka.Config{Host: "127.0.0.1", ReconcileEvery: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	srv.Reconcile()
	var seeds []string
	for id := 1; id <= 3; id++ {
		seeds = append(seeds, srv.Addr(id))
	}
	var hook batchCounter
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("events"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.WithHooks(&hook)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	payload := make([]byte, 100)
	// A warm-up: kgo learns the leaders and connects to each.
	for range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: payload}).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
	hook.records.Store(0)
	hook.batches.Store(0)
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 64 {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := cl.ProduceSync(ctx, &kgo.Record{Value: payload}).FirstErr(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	return hook.records.Load(), max(hook.batches.Load(), 1)
}

// batchCounter counts the batches kgo had acknowledged and their records:
// with one partition per broker, a batch is a produce request.
type batchCounter struct{ records, batches atomic.Int64 }

func (h *batchCounter) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	h.records.Add(int64(m.NumRecords))
	h.batches.Add(1)
}

// discard is the embedded cluster with a Send that keeps nothing: it
// answers consecutive offsets per partition at once.
type discard struct {
	*backend.Local
	mu   sync.Mutex
	next map[int]uint64
}

func (d *discard) Send(_ string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.next == nil {
		d.next = map[int]uint64{}
	}
	out := make([]cluster.SendResult, len(msgs))
	for i := range msgs {
		out[i] = cluster.SendResult{SendResult: client.SendResult{Partition: *partition, Offset: d.next[*partition]}}
		d.next[*partition]++
	}
	return out, nil
}

// SendQueued is Send, at once.
func (d *discard) SendQueued(name string, partition int, msgs []topic.Message) cluster.Queued {
	r, err := d.Send(name, &partition, msgs)
	return cluster.Queued{Wait: func() ([]cluster.SendResult, error) { return r, err }}
}

// timedSend is the embedded cluster timing its Sends.
type timedSend struct {
	*backend.Local
	ns, n atomic.Int64
}

func (t *timedSend) Send(name string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error) {
	s := time.Now()
	r, err := t.Local.Send(name, partition, msgs)
	t.ns.Add(int64(time.Since(s)))
	t.n.Add(1)
	return r, err
}

// SendQueued times a queued send from its queueing to its outcome.
func (t *timedSend) SendQueued(name string, partition int, msgs []topic.Message) cluster.Queued {
	s := time.Now()
	q := t.Local.SendQueued(name, partition, msgs)
	wait := q.Wait
	q.Wait = func() ([]cluster.SendResult, error) {
		r, err := wait()
		t.ns.Add(int64(time.Since(s)))
		t.n.Add(1)
		return r, err
	}
	return q
}
