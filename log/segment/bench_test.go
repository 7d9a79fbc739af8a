package segment_test

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// The benchmarks pair the segmented log with phase 1's log.Log in one run,
// as sub-benchmarks:
//
//	go test -run '^$' -bench . -benchmem -benchtime 2s ./log/segment/
//	go test -run '^$' -bench SegmentOpen -benchmem -segbench.mib 64 ./log/segment/
//
// The targets: appends at >= 0.95x log.Log's records/s (1 and 64
// appenders); Open of N sealed segments and an active one at <= 2x the
// Open of the active segment alone, with at most 1 KiB of memory per MiB
// of sealed segment (the sealed-B/MiB metric).

const (
	benchPayloadSize = 100
	// benchParallelism times GOMAXPROCS goroutines: 64 appenders on 2 cores.
	benchParallelism = 32
	// benchAppendSegmentBytes is small enough that the segmented log rolls
	// many times during an append benchmark (rolls/s says how often).
	benchAppendSegmentBytes = 1 << 20
	// benchOpenSegmentMiB is the size of each segment BenchmarkSegmentOpen
	// builds; set -segbench.mib 64 (the real measurement) or change it here.
	benchOpenSegmentMiB = 4
	// benchOpenSealed is the number of sealed segments it builds.
	benchOpenSealed = 8
)

var (
	benchOpenMiB     = flag.Int("segbench.mib", benchOpenSegmentMiB, "MiB per segment in BenchmarkSegmentOpen")
	benchOpenSealedN = flag.Int("segbench.sealed", benchOpenSealed, "sealed segments in BenchmarkSegmentOpen")
)

var benchPayload = make([]byte, benchPayloadSize)

// BenchmarkSegmentAppend: one op is one durable 100-byte record, with 1
// and 64 appenders, on phase 1's log.Log and on a segmented log that rolls
// every MiB, in a real temp directory (not tmpfs: fsync must cost what it
// costs).
func BenchmarkSegmentAppend(b *testing.B) {
	for _, appenders := range []int{1, 64} {
		for _, kind := range []string{"log", "segment"} {
			b.Run(kind+"/appenders="+map[int]string{1: "1", 64: "64"}[appenders], func(b *testing.B) {
				dir := benchDir(b)
				var appendOne func() error
				var segs func() int
				if kind == "log" {
					l, err := log.OpenWithOptions(filepath.Join(dir, "log.bin"), log.Options{})
					if err != nil {
						b.Fatal(err)
					}
					defer l.Close()
					appendOne = func() error { _, err := l.Append(benchPayload); return err }
					segs = func() int { return 1 }
				} else {
					l, err := segment.Open(dir, segment.Options{SegmentBytes: benchAppendSegmentBytes})
					if err != nil {
						b.Fatal(err)
					}
					defer l.Close()
					appendOne = func() error { _, err := l.Append(benchPayload); return err }
					segs = func() int { return len(l.Segments()) }
				}
				b.SetBytes(int64(log.FrameSize(benchPayloadSize)))
				b.ReportAllocs()
				if appenders == 1 {
					for b.Loop() {
						if err := appendOne(); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(benchParallelism)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := appendOne(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(segs()-1)/b.Elapsed().Seconds(), "rolls/s")
			})
		}
	}
}

// benchDir is a new directory under the benchmark's TempDir, which must be
// on a real disk (here ext4; set TMPDIR when /tmp is a tmpfs).
func benchDir(b *testing.B) string {
	return filepath.Join(b.TempDir(), "p")
}

// BenchmarkSegmentOpen: Open of a log with benchOpenSealed sealed segments
// and a half-full active one, against log.OpenWithOptions of that active
// segment alone (the scan the segmented Open cannot avoid). Reports the
// memory kept for sealed data per MiB of sealed segments (sealed-B/MiB,
// from the structures) and the heap one open log holds, active index
// included (heap-B).
func BenchmarkSegmentOpen(b *testing.B) {
	segBytes := int64(*benchOpenMiB) << 20
	dir := filepath.Join(b.TempDir(), "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	frame := int64(log.FrameSize(benchPayloadSize))
	perSeg := uint64(segBytes / frame)
	var base uint64
	var active string
	for i := 0; i <= *benchOpenSealedN; i++ {
		n := perSeg
		if i == *benchOpenSealedN {
			n = perSeg / 2
		}
		buf := make([]byte, 0, int64(n)*frame)
		for off := base; off < base+n; off++ {
			buf = log.AppendFrame(buf, log.Record{Offset: off, Timestamp: int64(off), Payload: benchPayload})
		}
		active = filepath.Join(dir, segment.SegmentFileName(base))
		if err := os.WriteFile(active, buf, 0o644); err != nil {
			b.Fatal(err)
		}
		base += n
	}
	activeBase := base - perSeg/2
	// The first open writes the sidecars.
	l, err := segment.Open(dir, segment.Options{SegmentBytes: segBytes})
	if err != nil {
		b.Fatal(err)
	}
	if len(l.Rebuilt()) != *benchOpenSealedN {
		b.Fatalf("%d sidecars built", len(l.Rebuilt()))
	}
	_ = l.Close()

	b.Run("segmented", func(b *testing.B) {
		// Memory is measured on one open outside the timed loop: the
		// collections it needs would be timed otherwise.
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		l, err := segment.Open(dir, segment.Options{SegmentBytes: segBytes})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
		mem, sealed, err := segment.SealedMemory(l)
		if err != nil {
			b.Fatal(err)
		}
		_ = l.Close()

		b.ReportAllocs()
		for b.Loop() {
			l, err := segment.Open(dir, segment.Options{SegmentBytes: segBytes})
			if err != nil {
				b.Fatal(err)
			}
			_ = l.Close()
		}
		b.ReportMetric(float64(mem)/(float64(sealed)/(1<<20)), "sealed-B/MiB")
		b.ReportMetric(float64(heap), "heap-B")
	})
	b.Run("active-alone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l, err := log.OpenWithOptions(active, log.Options{BaseOffset: activeBase})
			if err != nil {
				b.Fatal(err)
			}
			_ = l.Close()
		}
	})
}
