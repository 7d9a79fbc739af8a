package kafka_test

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka"
)

// syncLog is a log's output, safe for concurrent use.
type syncLog struct {
	// mu guards buf.
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count is how many lines hold s.
func (l *syncLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for line := range bytes.Lines(l.buf.Bytes()) {
		if bytes.Contains(line, []byte(s)) {
			n++
		}
	}
	return n
}

// TestKafkaSASLRefusalsRateLimited: a client that fails its SASL
// authentication again and again from one address is logged once — the
// others are summed up a minute later (server/bounds.Refusals) — and
// every failure is counted in
// pystream_refused_connections_total{port="kafka",reason="sasl"}
// (docs/security.md § Refused connections).
func TestKafkaSASLRefusalsRateLimited(t *testing.T) {
	logs := &syncLog{}
	reg := prometheus.NewRegistry()
	s := startSecured(t, false, 1, 1, 1, func(c *kafka.Config) {
		c.Logger, c.Registerer = slog.New(slog.NewTextHandler(logs, nil)), reg
	})
	const n = 20
	for range n {
		nc := s.dial(t, 1)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, "GSSAPI"
		resp := roundTrip(t, nc, hs, 1).(*kmsg.SASLHandshakeResponse)
		require.Equal(t, kerr.UnsupportedSaslMechanism.Code, resp.ErrorCode)
		requireClosed(t, nc) // logged (or counted) before the answer
	}
	require.Equal(t, 1, logs.count("kafka authentication failed"), "the first failure logged, the others counted")
	require.Equal(t, 1, logs.count("reason=sasl"))
	require.Equal(t, 1, testutil.CollectAndCount(reg, "pystream_refused_connections_total"))
	require.Equal(t, float64(n), refusedSASL(t, reg))
}

// refusedSASL is pystream_refused_connections_total{port="kafka",
// reason="sasl"} as gathered from reg.
func refusedSASL(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "pystream_refused_connections_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["port"] == "kafka" && labels["reason"] == "sasl" {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatal("no pystream_refused_connections_total{port=\"kafka\",reason=\"sasl\"}")
	return 0
}
