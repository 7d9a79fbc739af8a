package perfstat

import (
	"fmt"
	"io"
	"time"
)

// formatInterim is the shorter line printed while a run is in progress.
func formatInterim(s Summary) string {
	return fmt.Sprintf("%d records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency.",
		s.Records, s.RecordsPerSec, s.MBPerSec, s.AvgMs, s.MaxMs)
}

// Progress prints an interim line for r to w every interval until stop is
// closed, then returns. It is meant to run in its own goroutine, and only
// when w is a terminal: progress lines would pollute a redirected report.
func Progress(w io.Writer, r *Recorder, interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			win := r.TakeWindow()
			fmt.Fprintln(w, win.Interim(now.Sub(last)))
			last = now
		}
	}
}
