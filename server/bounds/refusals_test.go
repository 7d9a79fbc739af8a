package bounds

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

func tcpAddr(ip string, port int) net.Addr {
	return &net.TCPAddr{IP: net.ParseIP(ip), Port: port}
}

// logBuffer is a log's output, safe for concurrent use: the summary
// lines are written by timers.
type logBuffer struct {
	// mu guards buf.
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines are the log lines written so far.
func lines(b *logBuffer) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(b.buf.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestRefusalsLogFirstThenSummary pins the rule of refused connections'
// lines (docs/security.md § Refused connections): a remote IP's first
// refusal for a reason is logged at once; the next ones within
// RefusalLogInterval are counted, and one summary line with their count
// ends the interval; every refusal is counted in the metric.
func TestRefusalsLogFirstThenSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		reg := prometheus.NewRegistry()
		r, err := NewRefusals(reg, "internal")
		require.NoError(t, err)

		const n = 1000
		for i := range n {
			// Another port each time: one source is the IP, not the
			// connection.
			r.Refuse(log, tcpAddr("192.0.2.7", 40000+i%20000), "untrusted", "internal port: connection refused", "err", "bad certificate")
		}
		require.Len(t, lines(&logs), 1, "the first refusal alone, at once")
		require.Contains(t, lines(&logs)[0], "reason=untrusted")
		require.Equal(t, float64(n), testutil.ToFloat64(r.counter.WithLabelValues("internal", "untrusted")))

		// Another reason, and another IP, are sources of their own.
		r.Refuse(log, tcpAddr("192.0.2.7", 1), "no_certificate", "internal port: connection refused")
		r.Refuse(log, tcpAddr("198.51.100.1", 1), "untrusted", "internal port: connection refused")
		require.Len(t, lines(&logs), 3)

		time.Sleep(RefusalLogInterval)
		synctest.Wait()
		got := lines(&logs)
		require.Len(t, got, 4, "one summary line ends the interval")
		require.Contains(t, got[3], "(summary)")
		require.Contains(t, got[3], fmt.Sprintf("refused=%d", n-1))
		require.Contains(t, got[3], "remote_ip=192.0.2.7")

		// Within the next interval, again counted, summarized once.
		for range 5 {
			r.Refuse(log, tcpAddr("192.0.2.7", 1), "untrusted", "internal port: connection refused")
		}
		require.Len(t, lines(&logs), 4)
		time.Sleep(RefusalLogInterval)
		synctest.Wait()
		require.Len(t, lines(&logs), 5)
		require.Contains(t, lines(&logs)[4], "refused=5")

		// After a quiet interval, the next refusal is a first one again.
		time.Sleep(RefusalLogInterval)
		r.Refuse(log, tcpAddr("192.0.2.7", 1), "untrusted", "internal port: connection refused")
		require.Len(t, lines(&logs), 6)
		require.NotContains(t, lines(&logs)[5], "(summary)")

		// A second port shares the registry's family.
		k, err := NewRefusals(reg, "kafka")
		require.NoError(t, err)
		k.Refuse(nil, tcpAddr("192.0.2.7", 1), "sasl", "kafka authentication failed")
		require.Equal(t, 3, testutil.CollectAndCount(reg, refusedName))
	})
}

// TestRefusalsForgetOldestSource: past MaxRefusalSources, the source
// refused least recently is forgotten, its pending summary dropped: the
// memory is bounded whatever the number of remote IPs.
func TestRefusalsForgetOldestSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		r, err := NewRefusals(nil, "kafka")
		require.NoError(t, err)
		ip := func(i int) net.Addr { return tcpAddr(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), 1) }
		r.Refuse(log, ip(0), "tls", "m")
		r.Refuse(log, ip(0), "tls", "m") // a summary pending
		for i := 1; i <= MaxRefusalSources; i++ {
			r.Refuse(log, ip(i), "tls", "m")
		}
		r.mu.Lock()
		require.Len(t, r.sources, MaxRefusalSources)
		_, kept := r.sources[refusalKey{ip: "10.0.0.0", reason: "tls"}]
		r.mu.Unlock()
		require.False(t, kept, "the least recent source is forgotten")
		time.Sleep(RefusalLogInterval)
		synctest.Wait()
		require.Len(t, lines(&logs), MaxRefusalSources+1, "one line per source, no summary of a forgotten one")
	})
}
