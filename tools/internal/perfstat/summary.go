package perfstat

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// bytesPerMB is the megabyte of the report: 1024*1024 bytes, as in Kafka's
// perf tools.
const bytesPerMB = 1024 * 1024

// Summary holds the figures of one benchmark run. The zero value describes a
// run that sent nothing.
type Summary struct {
	// Records is the number of records sent.
	Records int64 `json:"records"`
	// Bytes is the number of payload bytes sent.
	Bytes int64 `json:"bytes"`
	// Elapsed is the wall-clock time of the run.
	Elapsed time.Duration `json:"-"`
	// ElapsedMs is Elapsed in milliseconds, for JSON output.
	ElapsedMs float64 `json:"elapsed_ms"`
	// RecordsPerSec and MBPerSec are the throughput over Elapsed.
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"`
	// AvgMs and MaxMs are the mean and largest latency in milliseconds.
	AvgMs float64 `json:"avg_latency_ms"`
	MaxMs float64 `json:"max_latency_ms"`
	// P50Ms, P95Ms, P99Ms and P999Ms are latency percentiles in
	// milliseconds.
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
}

// Summarize computes the figures of a run from the latency of every record,
// the payload bytes sent and the elapsed time. It sorts latencies in place.
// A zero elapsed time gives zero throughput rather than infinity.
func Summarize(latencies []time.Duration, bytes int64, elapsed time.Duration) Summary {
	s := Summary{
		Records:   int64(len(latencies)),
		Bytes:     bytes,
		Elapsed:   elapsed,
		ElapsedMs: ms(elapsed),
	}
	if elapsed > 0 {
		secs := elapsed.Seconds()
		s.RecordsPerSec = float64(s.Records) / secs
		s.MBPerSec = float64(bytes) / bytesPerMB / secs
	}
	if len(latencies) == 0 {
		return s
	}
	slices.Sort(latencies)
	var total time.Duration
	for _, l := range latencies {
		total += l
	}
	s.AvgMs = ms(total) / float64(len(latencies))
	s.MaxMs = ms(latencies[len(latencies)-1])
	s.P50Ms = ms(Percentile(latencies, 0.50))
	s.P95Ms = ms(Percentile(latencies, 0.95))
	s.P99Ms = ms(Percentile(latencies, 0.99))
	s.P999Ms = ms(Percentile(latencies, 0.999))
	return s
}

// Percentile returns the p-th percentile (0 < p <= 1) of sorted by the
// nearest-rank method: the smallest sample such that at least p of all
// samples are at or below it. It returns 0 for no samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// String is the report line in the shape of kafka-producer-perf-test.
func (s Summary) String() string {
	return fmt.Sprintf("%d records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %.2f ms 50th, %.2f ms 95th, %.2f ms 99th, %.2f ms 99.9th.",
		s.Records, s.RecordsPerSec, s.MBPerSec, s.AvgMs, s.MaxMs, s.P50Ms, s.P95Ms, s.P99Ms, s.P999Ms)
}

// ms converts a duration to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
