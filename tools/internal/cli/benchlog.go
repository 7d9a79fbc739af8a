package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/tools/internal/perfstat"
	"github.com/pystream/pystream/topic"
	"github.com/spf13/cobra"
)

// progressInterval is how often a benchmark prints interim figures on a
// terminal, as kafka-producer-perf-test does.
const progressInterval = 5 * time.Second

// benchLogConfig is what `bench log` runs. The flags' defaults are the
// documented defaults.
type benchLogConfig struct {
	// Records is the number of records appended in total.
	Records int `json:"records"`
	// RecordSize is the payload size of every record, in bytes.
	RecordSize int `json:"record_size"`
	// Concurrency is the number of goroutines appending at once.
	Concurrency int `json:"concurrency"`
	// Batch is the number of records per AppendBatch call.
	Batch int `json:"batch"`
	// Dir is where the scratch directory is made; "" is the system's
	// temporary directory.
	Dir string `json:"-"`
	// Keep leaves the scratch directory in place.
	Keep bool `json:"-"`
}

// check validates the configuration; a bad value is a usage error.
func (c benchLogConfig) check() error {
	switch {
	case c.Records < 1:
		return usageErrorf("--records %d: must be at least 1", c.Records)
	case c.RecordSize < 0 || c.RecordSize > log.DefaultMaxPayloadSize:
		return usageErrorf("--record-size %d: must be between 0 and %d", c.RecordSize, log.DefaultMaxPayloadSize)
	case c.Concurrency < 1:
		return usageErrorf("--concurrency %d: must be at least 1", c.Concurrency)
	case c.Batch < 1:
		return usageErrorf("--batch %d: must be at least 1", c.Batch)
	}
	return nil
}

// claim hands out the records of a run in batches to concurrent workers. It
// is safe for concurrent use.
type claim struct {
	total int64
	next  atomic.Int64
}

// take returns how many records the caller should append next, at most
// batch, or 0 when every record is handed out.
func (c *claim) take(batch int) int {
	start := c.next.Add(int64(batch)) - int64(batch)
	if start >= c.total {
		return 0
	}
	return int(min(int64(batch), c.total-start))
}

// benchLogResult is what `bench log --json` prints.
type benchLogResult struct {
	Benchmark string         `json:"benchmark"`
	Config    benchLogConfig `json:"config"`
	perfstat.Summary
}

func (a *app) benchLogCommand() *cobra.Command {
	cfg := benchLogConfig{Records: 100000, RecordSize: 100, Concurrency: 1, Batch: 1}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Benchmark durable appends to a log in a scratch directory",
		Long: "Append --records records of --record-size bytes to a fresh segmented log (a\n" +
			"partition's directory of segment files, as a topic keeps it) in a scratch\n" +
			"directory, from --concurrency goroutines, --batch records per AppendBatch.\n" +
			"Every record is fsync-ed before it counts. Prints one line in the shape of\n" +
			"kafka-producer-perf-test (latency is per record: a batch's records share its\n" +
			"latency). Progress goes to stderr when it is a terminal. The scratch directory\n" +
			"is removed unless --keep; choose its disk with --dir.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.check(); err != nil {
				return err
			}
			// Ctrl-C stops the appenders, so that the scratch directory
			// is still removed.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.benchLog(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Records, "records", cfg.Records, "number of records to append")
	f.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "payload size in bytes")
	f.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "concurrent appenders")
	f.IntVar(&cfg.Batch, "batch", cfg.Batch, "records per AppendBatch call")
	f.StringVar(&cfg.Dir, "dir", "", "parent of the scratch directory (default: the system temp dir)")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the scratch directory")
	return cmd
}

func (a *app) benchLog(ctx context.Context, cfg benchLogConfig) (err error) {
	dir, err := os.MkdirTemp(cfg.Dir, "pystream-bench-log-")
	if err != nil {
		return fmt.Errorf("bench log: %w", err)
	}
	defer func() {
		if cfg.Keep {
			fmt.Fprintf(a.env.Stderr, "bench log: kept %s\n", dir)
			return
		}
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = fmt.Errorf("bench log: remove scratch directory: %w", rerr)
		}
	}()
	// A partition's log: a directory of segments, as a topic or a
	// replica keeps it.
	l, err := segment.Open(topic.PartitionLogDir(dir, 0), segment.Options{})
	if err != nil {
		return fmt.Errorf("bench log: %w", err)
	}
	defer func() {
		if cerr := l.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("bench log: %w", cerr)
		}
	}()

	payloads := make([][]byte, cfg.Batch)
	payload := make([]byte, cfg.RecordSize)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	for i := range payloads {
		payloads[i] = payload
	}

	rec := perfstat.NewRecorder(cfg.Records)
	work := &claim{total: int64(cfg.Records)}
	stop := make(chan struct{})
	var progress sync.WaitGroup
	if a.env.IsTerminal(a.env.Stderr) {
		progress.Go(func() { perfstat.Progress(a.env.Stderr, rec, progressInterval, stop) })
	}

	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	start := time.Now()
	for range cfg.Concurrency {
		wg.Go(func() {
			for n := work.take(cfg.Batch); n > 0 && ctx.Err() == nil; n = work.take(cfg.Batch) {
				t0 := time.Now()
				if _, err := l.AppendBatch(payloads[:n]); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				rec.Add(n, int64(n*cfg.RecordSize), time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	progress.Wait()
	if firstErr != nil {
		return fmt.Errorf("bench log: %w", firstErr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("bench log: interrupted after %d of %d records", l.NextOffset(), cfg.Records)
	}
	if got := l.NextOffset(); got != uint64(cfg.Records) {
		return fmt.Errorf("bench log: log holds %d records, want %d", got, cfg.Records)
	}

	s := rec.Summary(elapsed)
	if a.g.json {
		return json.NewEncoder(a.env.Stdout).Encode(benchLogResult{Benchmark: "log", Config: cfg, Summary: s})
	}
	_, err = fmt.Fprintln(a.env.Stdout, s)
	return err
}
