package perfstat

import (
	"sync"
	"time"
)

// Recorder collects the latency of every record of a run. It is safe for
// concurrent use.
type Recorder struct {
	// mu guards every field below.
	mu sync.Mutex
	// latencies holds one entry per record.
	latencies []time.Duration
	// bytes is the payload bytes recorded.
	bytes int64
	// window holds the records since the last TakeWindow call.
	window Window
}

// Window describes the records acknowledged during one progress interval.
type Window struct {
	// Records and Bytes count what was acknowledged.
	Records int64
	Bytes   int64
	// Sum and Max are the total and the largest record latency.
	Sum time.Duration
	Max time.Duration
}

// NewRecorder returns a Recorder with room for expected records.
func NewRecorder(expected int) *Recorder {
	return &Recorder{latencies: make([]time.Duration, 0, max(expected, 0))}
}

// Add notes that records records carrying bytes payload bytes in total were
// acknowledged together after latency. A batch acknowledged at once gives
// every record in it the batch's latency, as a producer's callback would see.
func (r *Recorder) Add(records int, bytes int64, latency time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for range records {
		r.latencies = append(r.latencies, latency)
	}
	r.bytes += bytes
	r.window.Records += int64(records)
	r.window.Bytes += bytes
	r.window.Sum += latency * time.Duration(records)
	r.window.Max = max(r.window.Max, latency)
}

// TakeWindow returns the records added since the previous call and starts a
// new window.
func (r *Recorder) TakeWindow() Window {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.window
	r.window = Window{}
	return w
}

// Summary computes the figures of everything recorded so far over elapsed.
func (r *Recorder) Summary(elapsed time.Duration) Summary {
	r.mu.Lock()
	lat := make([]time.Duration, len(r.latencies))
	copy(lat, r.latencies)
	bytes := r.bytes
	r.mu.Unlock()
	return Summarize(lat, bytes, elapsed)
}

// Interim is the progress line for a window of elapsed length, in the shape
// kafka-producer-perf-test prints while it runs.
func (w Window) Interim(elapsed time.Duration) string {
	s := Summary{Records: w.Records, Bytes: w.Bytes}
	if elapsed > 0 {
		s.RecordsPerSec = float64(w.Records) / elapsed.Seconds()
		s.MBPerSec = float64(w.Bytes) / bytesPerMB / elapsed.Seconds()
	}
	if w.Records > 0 {
		s.AvgMs = ms(w.Sum) / float64(w.Records)
	}
	s.MaxMs = ms(w.Max)
	return formatInterim(s)
}
