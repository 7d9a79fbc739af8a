package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/tools/internal/perfstat"
	"github.com/spf13/cobra"
)

// This file holds bench produce and bench consume: the HTTP API measured
// from outside, with --concurrency clients sharing one keep-alive
// connection pool. Latency is per request, given to every record of it.

// benchServerConfig is what bench produce and bench consume run.
type benchServerConfig struct {
	// Records is the number of records produced (produce), or the most
	// read (consume).
	Records int `json:"records"`
	// RecordSize is the value size of every produced record, in bytes.
	RecordSize int `json:"record_size"`
	// Concurrency is the number of requests in flight at once.
	Concurrency int `json:"concurrency"`
	// Batch is the records per produce request, or the most per fetch.
	Batch int `json:"batch"`
	// Partitions and RF are the settings of a topic the benchmark creates.
	Partitions int `json:"partitions"`
	RF         int `json:"replication_factor"`
	// Topic is the topic used; "" creates a new bench-<unix ns>.
	Topic string `json:"topic"`
}

// check validates the configuration; a bad value is a usage error.
func (c benchServerConfig) check() error {
	switch {
	case c.Records < 1:
		return usageErrorf("--records %d: must be at least 1", c.Records)
	case c.RecordSize < 0:
		return usageErrorf("--record-size %d: must not be negative", c.RecordSize)
	case c.Concurrency < 1:
		return usageErrorf("--concurrency %d: must be at least 1", c.Concurrency)
	case c.Batch < 1:
		return usageErrorf("--batch %d: must be at least 1", c.Batch)
	case c.Partitions < 1:
		return usageErrorf("--partitions %d: must be at least 1", c.Partitions)
	case c.RF < 1:
		return usageErrorf("--rf %d: must be at least 1", c.RF)
	}
	return nil
}

// benchServerResult is what bench produce|consume --json prints.
type benchServerResult struct {
	Benchmark string            `json:"benchmark"`
	Config    benchServerConfig `json:"config"`
	perfstat.Summary
}

func (a *app) benchServerFlags(cmd *cobra.Command, cfg *benchServerConfig, batchHelp string) {
	f := cmd.Flags()
	f.IntVar(&cfg.Records, "records", cfg.Records, "number of records")
	f.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "value size in bytes")
	f.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "requests in flight at once")
	f.IntVar(&cfg.Batch, "batch", cfg.Batch, batchHelp)
	f.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "partitions of the topic the benchmark creates")
	f.IntVar(&cfg.RF, "rf", cfg.RF, "replication factor of the topic the benchmark creates")
	f.StringVar(&cfg.Topic, "topic", "", "topic to use (default: a new bench-<unix ns>; created when missing)")
}

func (a *app) benchProduceCommand() *cobra.Command {
	cfg := benchServerConfig{Records: 10000, RecordSize: 100, Concurrency: 1, Batch: 1, Partitions: 1, RF: 1}
	var keep bool
	cmd := &cobra.Command{
		Use:   "produce",
		Short: "Benchmark durable produce requests against a running server",
		Long: "Produce --records records of --record-size bytes (no key: round-robin) through\n" +
			"the HTTP API, --batch records per request, --concurrency requests in flight.\n" +
			"A record counts once the server acknowledged it (fsync-ed on every active\n" +
			"replica). Prints one line in the shape of kafka-producer-perf-test; progress\n" +
			"on stderr when it is a terminal. Without --topic the run's own bench-<unix ns>\n" +
			"topic is deleted afterwards (also after Ctrl-C) unless --keep.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.check(); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			// Ctrl-C stops the producers, so that the run's topic is
			// still deleted.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.benchProduce(ctx, c, cfg, keep)
		},
	}
	a.benchServerFlags(cmd, &cfg, "records per produce request")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the topic the run created (without --topic); it is deleted otherwise")
	return cmd
}

func (a *app) benchConsumeCommand() *cobra.Command {
	cfg := benchServerConfig{Records: 10000, RecordSize: 100, Concurrency: 1, Batch: 1000, Partitions: 1, RF: 1}
	cmd := &cobra.Command{
		Use:   "consume",
		Short: "Benchmark fetches against a running server",
		Long: "Read every partition of --topic from offset 0 up to its high watermark (at\n" +
			"most --records records in all), --batch records per fetch, --concurrency\n" +
			"fetches in flight (each partition is read by one fetcher at a time). Without\n" +
			"--topic, a fresh topic is created and filled with --records records of\n" +
			"--record-size bytes first (not measured). Prints one line in the shape of\n" +
			"kafka-producer-perf-test.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.check(); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			return a.benchConsume(cmd.Context(), c, cfg)
		},
	}
	a.benchServerFlags(cmd, &cfg, "most records per fetch (the server caps it at 1000)")
	return cmd
}

// freshTopicTries bounds the attempts to find an unused bench-<ns> name.
const freshTopicTries = 10

// benchTopic returns the topic of a run: --topic if it exists, else a topic
// created with --partitions and --rf. fresh reports a newly made topic.
// Without --topic it makes a new bench-<unix ns> topic: a name that exists
// already (another run's, maybe with other settings) is never reused, since
// its records would be counted as this run's.
func (a *app) benchTopic(ctx context.Context, c *apiclient.Client, cfg *benchServerConfig) (*apiclient.TopicDetail, bool, error) {
	if cfg.Topic == "" {
		for range freshTopicTries {
			name := fmt.Sprintf("bench-%d", time.Now().UnixNano())
			td, created, err := c.CreateTopic(ctx, name, cfg.Partitions, cfg.RF)
			switch {
			case err == nil && created:
				cfg.Topic = name
				return td, true, nil
			case err != nil && !errors.Is(err, apiclient.ErrConflict):
				return nil, false, a.apiError("bench: create topic "+name, err)
			}
		}
		return nil, false, fmt.Errorf("bench: no unused bench-<ns> topic name after %d tries", freshTopicTries)
	}
	td, err := c.Topic(ctx, cfg.Topic)
	if err == nil {
		cfg.Partitions, cfg.RF = td.PartitionCount, td.ReplicationFactor
		return td, false, nil
	}
	if !errors.Is(err, apiclient.ErrNotFound) {
		return nil, false, a.apiError("bench: topic "+cfg.Topic, err)
	}
	td, created, err := c.CreateTopic(ctx, cfg.Topic, cfg.Partitions, cfg.RF)
	if err != nil {
		return nil, false, a.apiError("bench: create topic "+cfg.Topic, err)
	}
	return td, created, nil
}

// runWorkers runs fn on n goroutines until each returns, and returns the
// first error; the context fn gets is cancelled on that error.
func runWorkers(ctx context.Context, n int, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range n {
		wg.Go(func() {
			if err := fn(ctx); err != nil {
				once.Do(func() { firstErr = err; cancel() })
			}
		})
	}
	wg.Wait()
	return firstErr
}

// produceN produces cfg.Records records of cfg.RecordSize bytes, cfg.Batch
// per request from cfg.Concurrency workers, recording each request in rec
// when rec is not nil.
func (a *app) produceN(ctx context.Context, c *apiclient.Client, cfg benchServerConfig, rec *perfstat.Recorder) error {
	value := make([]byte, cfg.RecordSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	batch := make([]apiclient.ProduceRecord, cfg.Batch)
	for i := range batch {
		batch[i] = apiclient.ProduceRecord{Value: value}
	}
	work := &claim{total: int64(cfg.Records)}
	return runWorkers(ctx, cfg.Concurrency, func(ctx context.Context) error {
		for n := work.take(cfg.Batch); n > 0; n = work.take(cfg.Batch) {
			t0 := time.Now()
			if _, err := c.Produce(ctx, cfg.Topic, batch[:n]); err != nil {
				return a.apiError("bench produce", err)
			}
			if rec != nil {
				rec.Add(n, int64(n*cfg.RecordSize), time.Since(t0))
			}
		}
		return nil
	})
}

// measure runs body with progress on a terminal and prints the summary.
func (a *app) measure(name string, cfg benchServerConfig, expected int, body func(rec *perfstat.Recorder) error) error {
	rec := perfstat.NewRecorder(expected)
	stop := make(chan struct{})
	var progress sync.WaitGroup
	if a.env.IsTerminal(a.env.Stderr) {
		progress.Go(func() { perfstat.Progress(a.env.Stderr, rec, progressInterval, stop) })
	}
	start := time.Now()
	err := body(rec)
	elapsed := time.Since(start)
	close(stop)
	progress.Wait()
	if err != nil {
		return err
	}
	s := rec.Summary(elapsed)
	if a.g.json {
		return a.printJSON(benchServerResult{Benchmark: name, Config: cfg, Summary: s})
	}
	_, err = fmt.Fprintln(a.env.Stdout, s)
	return err
}

// deleteTopicTimeout bounds the deletion of a bench run's topic, which may
// run after Ctrl-C cancelled the run's context.
const deleteTopicTimeout = 30 * time.Second

func (a *app) benchProduce(ctx context.Context, c *apiclient.Client, cfg benchServerConfig, keep bool) (err error) {
	own := cfg.Topic == ""
	if _, _, err := a.benchTopic(ctx, c, &cfg); err != nil {
		return err
	}
	if own {
		// The topic is the run's own (bench-<unix ns>): it goes with the
		// run unless --keep, whatever the run's outcome.
		defer func() {
			if keep {
				fmt.Fprintf(a.env.Stderr, "bench produce: kept topic %s\n", cfg.Topic)
				return
			}
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTopicTimeout)
			defer cancel()
			if _, derr := c.DeleteTopic(dctx, cfg.Topic); derr != nil {
				err = errors.Join(err, a.apiError("bench produce: delete topic "+cfg.Topic, derr))
			}
		}()
	}
	err = a.measure("produce", cfg, cfg.Records, func(rec *perfstat.Recorder) error {
		return a.produceN(ctx, c, cfg, rec)
	})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("bench produce: interrupted: %w", ctx.Err())
	}
	return err
}

// partitionCursor is one partition being read by bench consume.
type partitionCursor struct {
	p        int
	next, hw uint64
}

func (a *app) benchConsume(ctx context.Context, c *apiclient.Client, cfg benchServerConfig) error {
	_, fresh, err := a.benchTopic(ctx, c, &cfg)
	if err != nil {
		return err
	}
	if fresh {
		fill := cfg
		fill.Batch = 500
		if err := a.produceN(ctx, c, fill, nil); err != nil {
			return err
		}
	}
	td, err := c.Topic(ctx, cfg.Topic)
	if err != nil {
		return a.apiError("bench consume: topic "+cfg.Topic, err)
	}
	// The partitions to read, up to --records records in all.
	var cursors []*partitionCursor
	left := uint64(cfg.Records)
	for _, ps := range td.Partitions {
		n := min(ps.HighWatermark, left)
		if n > 0 {
			cursors = append(cursors, &partitionCursor{p: ps.Partition, hw: n})
			left -= n
		}
	}
	total := int(uint64(cfg.Records) - left)
	// Each cursor is in the queue or held by one fetcher, so a partition
	// is read in order; the queue closes when the last cursor is done.
	queue := make(chan *partitionCursor, len(cursors))
	for _, cur := range cursors {
		queue <- cur
	}
	var remaining atomic.Int64
	remaining.Store(int64(len(cursors)))
	if len(cursors) == 0 {
		close(queue)
	}
	return a.measure("consume", cfg, total, func(rec *perfstat.Recorder) error {
		return runWorkers(ctx, cfg.Concurrency, func(ctx context.Context) error {
			for {
				var cur *partitionCursor
				select {
				case <-ctx.Done():
					return nil // another fetcher failed
				case next, ok := <-queue:
					if !ok {
						return nil
					}
					cur = next
				}
				max := int(min(uint64(cfg.Batch), cur.hw-cur.next))
				t0 := time.Now()
				res, err := c.Fetch(ctx, cfg.Topic, cur.p, cur.next, max)
				if err != nil {
					return a.apiError("bench consume", err)
				}
				if len(res.Records) == 0 {
					return fmt.Errorf("bench consume: %s/%d returned no records at offset %d below %d", cfg.Topic, cur.p, cur.next, cur.hw)
				}
				n := min(len(res.Records), max)
				var bytes int64
				for _, r := range res.Records[:n] {
					bytes += int64(len(r.Value))
				}
				rec.Add(n, bytes, time.Since(t0))
				cur.next += uint64(n)
				if cur.next < cur.hw {
					queue <- cur // room: the queue holds every cursor
				} else if remaining.Add(-1) == 0 {
					close(queue)
				}
			}
		})
	})
}
