package perfstat_test

import (
	"fmt"
	"time"

	"github.com/pystream/pystream/tools/internal/perfstat"
)

func ExampleSummarize() {
	latencies := []time.Duration{
		800 * time.Microsecond, 1200 * time.Microsecond, 1 * time.Millisecond, 3 * time.Millisecond,
	}
	s := perfstat.Summarize(latencies, 4*100, 10*time.Millisecond)
	fmt.Println(s)
	// Output:
	// 4 records sent, 400.0 records/sec (0.04 MB/sec), 1.50 ms avg latency, 3.00 ms max latency, 1.00 ms 50th, 3.00 ms 95th, 3.00 ms 99th, 3.00 ms 99.9th.
}
