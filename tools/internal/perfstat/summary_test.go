package perfstat

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func durations(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

// TestPerfstatPercentile pins the nearest-rank definition: the p-th
// percentile is the smallest sample with at least p of all samples at or
// below it.
func TestPerfstatPercentile(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"no samples", nil, 0.5, 0},
		{"one sample", durations(7), 0.999, 7 * time.Millisecond},
		{"median of odd", durations(1, 2, 3), 0.5, 2 * time.Millisecond},
		{"median of even takes lower", durations(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p95 of 1..100", durations(hundred...), 0.95, 95 * time.Millisecond},
		{"p99 of 1..100", durations(hundred...), 0.99, 99 * time.Millisecond},
		{"p999 of 1..100 is the max", durations(hundred...), 0.999, 100 * time.Millisecond},
		{"tiny p is the min", durations(1, 2, 3), 0.0001, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Percentile(tt.samples, tt.p))
		})
	}
}

// TestPerfstatSummarize checks every figure of the report on known input.
func TestPerfstatSummarize(t *testing.T) {
	lat := durations(4, 1, 3, 2) // unsorted on purpose
	s := Summarize(lat, 2*bytesPerMB, 2*time.Second)
	require.Equal(t, int64(4), s.Records)
	require.InDelta(t, 2.0, s.RecordsPerSec, 1e-9)
	require.InDelta(t, 1.0, s.MBPerSec, 1e-9)
	require.InDelta(t, 2.5, s.AvgMs, 1e-9)
	require.InDelta(t, 4.0, s.MaxMs, 1e-9)
	require.InDelta(t, 2.0, s.P50Ms, 1e-9)
	require.InDelta(t, 4.0, s.P95Ms, 1e-9)
	require.InDelta(t, 4.0, s.P999Ms, 1e-9)
	require.InDelta(t, 2000.0, s.ElapsedMs, 1e-9)
}

// TestPerfstatSummarizeEmpty: a run that sent nothing and took no time gives
// zeros, never NaN or infinity.
func TestPerfstatSummarizeEmpty(t *testing.T) {
	s := Summarize(nil, 0, 0)
	require.Equal(t, Summary{}, s)
	require.Equal(t, "0 records sent, 0.0 records/sec (0.00 MB/sec), 0.00 ms avg latency, 0.00 ms max latency, 0.00 ms 50th, 0.00 ms 95th, 0.00 ms 99th, 0.00 ms 99.9th.", s.String())
}

// TestPerfstatRecorderConcurrent: latencies added from many goroutines are
// all counted, and batches count once per record.
func TestPerfstatRecorderConcurrent(t *testing.T) {
	r := NewRecorder(0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 100 {
				r.Add(2, 20, time.Duration(g+1)*time.Millisecond)
			}
		})
	}
	wg.Wait()
	w := r.TakeWindow()
	require.Equal(t, int64(1600), w.Records)
	require.Equal(t, int64(16000), w.Bytes)
	require.Equal(t, 8*time.Millisecond, w.Max)
	require.Equal(t, Window{}, r.TakeWindow(), "a window is taken once")
	s := r.Summary(time.Second)
	require.Equal(t, int64(1600), s.Records)
	require.Equal(t, int64(16000), s.Bytes)
	require.InDelta(t, 8.0, s.MaxMs, 1e-9)
	require.InDelta(t, 4.5, s.AvgMs, 1e-9)
}

// TestPerfstatInterim pins the progress line's shape.
func TestPerfstatInterim(t *testing.T) {
	w := Window{Records: 10, Bytes: bytesPerMB, Sum: 20 * time.Millisecond, Max: 5 * time.Millisecond}
	require.Equal(t, "10 records sent, 5.0 records/sec (0.50 MB/sec), 2.00 ms avg latency, 5.00 ms max latency.", w.Interim(2*time.Second))
}
