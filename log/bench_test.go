package log_test

import (
	"bufio"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// The benchmarks measure the log against the disk's own limits. Each
// reports records/s next to ns/op; one op is one durable record.
//
//	go test -run '^$' -bench . -benchtime 2s ./
//
// BenchmarkBareWriteSync and BenchmarkBareGroupCommit do the same writes and
// fdatasyncs of the same frame bytes without the log: docs/performance.md sets one
// appender >= 0.9x the first and 64 appenders >= 0.8x the second.

const (
	benchPayloadSize = 100
	// benchParallelism times GOMAXPROCS goroutines run the parallel
	// benchmarks; 32 x 2 cores = 64 appenders on this machine.
	benchParallelism = 32
)

var benchPayload = make([]byte, benchPayloadSize)

// syncCountingFS counts fsyncs so that benchmarks can report the batch size
// group commit reached.
type syncCountingFS struct {
	durable.FS
	syncs atomic.Int64
}

type syncCountingFile struct {
	durable.File
	syncs *atomic.Int64
}

func (f *syncCountingFS) OpenFile(name string, flag int, perm os.FileMode) (durable.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncCountingFile{File: file, syncs: &f.syncs}, nil
}

func (f syncCountingFile) Sync() error {
	f.syncs.Add(1)
	return f.File.Sync()
}

func reportRate(b *testing.B, records int64, syncs int64) {
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
	if syncs > 0 {
		b.ReportMetric(float64(records)/float64(syncs), "records/fsync")
	}
}

func benchLog(b *testing.B) (*log.Log, *syncCountingFS) {
	fsys := &syncCountingFS{FS: durable.OS}
	l, err := log.OpenWithOptions(filepath.Join(b.TempDir(), "log.bin"), log.Options{FS: fsys})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close() })
	return l, fsys
}

// BenchmarkAppend: one appender, 100-byte payloads, one fsync each.
func BenchmarkAppend(b *testing.B) {
	l, fsys := benchLog(b)
	b.ReportAllocs()
	b.SetBytes(int64(log.FrameSize(benchPayloadSize)))
	for b.Loop() {
		if _, err := l.Append(benchPayload); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, int64(b.N), fsys.syncs.Load())
}

// BenchmarkAppendParallel: 64 appenders on one log, group-committed.
func BenchmarkAppendParallel(b *testing.B) {
	l, fsys := benchLog(b)
	b.ReportAllocs()
	b.SetBytes(int64(log.FrameSize(benchPayloadSize)))
	b.SetParallelism(benchParallelism)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Append(benchPayload); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b, int64(b.N), fsys.syncs.Load())
}

// BenchmarkAppendBatch: one caller appending batches of 64 records; one op
// is one record.
func BenchmarkAppendBatch(b *testing.B) {
	const size = 64
	l, fsys := benchLog(b)
	batch := make([][]byte, size)
	for i := range batch {
		batch[i] = benchPayload
	}
	b.ReportAllocs()
	b.SetBytes(int64(log.FrameSize(benchPayloadSize)))
	for i := 0; i < b.N; i += size {
		n := min(size, b.N-i)
		if _, err := l.AppendBatch(batch[:n]); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, int64(b.N), fsys.syncs.Load())
}

// writeBenchLog writes n records of 100 bytes straight into a new file.
func writeBenchLog(b *testing.B, n int) string {
	path := filepath.Join(b.TempDir(), "log.bin")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var frame []byte
	for i := range n {
		frame = log.AppendFrame(frame[:0], log.Record{Offset: uint64(i), Timestamp: int64(i), Payload: benchPayload})
		if _, err := w.Write(frame); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRead: reads of 100 records from a 100,000-record log; one op is
// one record.
func BenchmarkRead(b *testing.B) {
	const records, per = 100_000, 100
	l, err := log.Open(writeBenchLog(b, records))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	b.SetBytes(int64(log.FrameSize(benchPayloadSize)))
	var start uint64
	for i := 0; i < b.N; i += per {
		recs, err := l.Read(start, min(per, b.N-i))
		if err != nil || len(recs) == 0 {
			b.Fatal(err, len(recs))
		}
		start = (start + per) % records
	}
	reportRate(b, int64(b.N), 0)
}

// BenchmarkOpen: recovery of a 100,000-record log (12.4 MB, page cache
// warm); one op is one Open.
func BenchmarkOpen(b *testing.B) {
	const records = 100_000
	path := writeBenchLog(b, records)
	b.ReportAllocs()
	b.SetBytes(int64(records * log.FrameSize(benchPayloadSize)))
	for b.Loop() {
		l, err := log.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if l.NextOffset() != records {
			b.Fatal(l.NextOffset())
		}
		_ = l.Close()
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// bareFile opens a scratch file for the baselines through durable.OS, whose
// Sync is fdatasync, like the log's.
func bareFile(b *testing.B) durable.File {
	f, err := durable.OS.OpenFile(filepath.Join(b.TempDir(), "bare.bin"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	return f
}

// BenchmarkBareWriteSync is the disk's limit for one appender: a loop of
// one positional write of the same 124-byte frame and one fdatasync, with
// no log around it.
func BenchmarkBareWriteSync(b *testing.B) {
	f := bareFile(b)
	frame := log.AppendFrame(nil, log.Record{Payload: benchPayload})
	b.SetBytes(int64(len(frame)))
	var pos int64
	for b.Loop() {
		if _, err := f.WriteAt(frame, pos); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		pos += int64(len(frame))
	}
	reportRate(b, int64(b.N), int64(b.N))
}

// bareCommitter is the baseline for many appenders: logtest.BareCommitter
// over one scratch file.
func bareCommitter(b *testing.B) *logtest.BareCommitter {
	g, err := logtest.NewBareCommitter(true, bareFile(b))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkBareGroupCommit is the disk's limit for 64 appenders.
func BenchmarkBareGroupCommit(b *testing.B) {
	g := bareCommitter(b)
	frame := log.AppendFrame(nil, log.Record{Payload: benchPayload})
	b.SetBytes(int64(len(frame)))
	b.SetParallelism(benchParallelism)
	b.RunParallel(func(pb *testing.PB) {
		done := make(chan error, 1)
		for pb.Next() {
			if err := g.Commit(frame, done); err != nil {
				b.Error(err)
				return
			}
		}
	})
	g.Close()
	reportRate(b, int64(b.N), g.Syncs())
}

// The machine's fsync latency drifts by a factor of two or more within
// seconds when other work shares the disk, so comparing benchmarks that ran
// one after the other says little. The two paired benchmarks below
// alternate the log and its baseline in small slices within one run and
// report both rates and their ratio (log / baseline).

// BenchmarkPairedOneAppender alternates one log Append and one bare
// write+fdatasync of the same frame, timing each side separately.
func BenchmarkPairedOneAppender(b *testing.B) {
	l, _ := benchLog(b)
	f := bareFile(b)
	frame := log.AppendFrame(nil, log.Record{Payload: benchPayload})
	var (
		pos             int64
		logDur, bareDur time.Duration
	)
	for b.Loop() {
		t0 := time.Now()
		if _, err := l.Append(benchPayload); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := f.WriteAt(frame, pos); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		bareDur += time.Since(t1)
		logDur += t1.Sub(t0)
		pos += int64(len(frame))
	}
	reportPaired(b, b.N, logDur, b.N, bareDur)
}

// BenchmarkPairedGroupCommit alternates rounds of 64 appenders on the log
// and 64 producers on the bare group-commit loop, 20 records each per round.
func BenchmarkPairedGroupCommit(b *testing.B) {
	const appenders, perRound = 2 * benchParallelism, 20
	l, _ := benchLog(b)
	g := bareCommitter(b)
	defer g.Close()
	frame := log.AppendFrame(nil, log.Record{Payload: benchPayload})
	dones := make([]chan error, appenders)
	for i := range dones {
		dones[i] = make(chan error, 1)
	}
	round := func(op func(i int) error) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for i := range appenders {
			wg.Go(func() {
				for range perRound {
					if err := op(i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	var logDur, bareDur time.Duration
	records := 0
	for b.Loop() {
		logDur += round(func(int) error { _, err := l.Append(benchPayload); return err })
		bareDur += round(func(i int) error { return g.Commit(frame, dones[i]) })
		records += appenders * perRound
	}
	reportPaired(b, records, logDur, records, bareDur)
}

func reportPaired(b *testing.B, logRecords int, logDur time.Duration, bareRecords int, bareDur time.Duration) {
	logRate := float64(logRecords) / logDur.Seconds()
	bareRate := float64(bareRecords) / bareDur.Seconds()
	b.ReportMetric(logRate, "log-records/s")
	b.ReportMetric(bareRate, "bare-records/s")
	b.ReportMetric(logRate/bareRate, "log/bare")
}
