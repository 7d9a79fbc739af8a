package server

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
)

// scrape fetches /metrics and parses it as the Prometheus text format.
func scrape(t *testing.T, r *running) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(r.base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// value returns the value of the one sample of family name whose labels
// include every pair of want (counter, gauge, or a histogram's count).
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func mustValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := value(t, fams, name, want)
	require.True(t, ok, "%s%v is exported", name, want)
	return v
}

// docs/phase-6-network-api.md § Metrics: /metrics parses as Prometheus text,
// and its counters, histograms and per-partition gauges move with traffic.
func TestMetricsMoveWithTraffic(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 3)
	_, _, err := r.client.CreateTopic(ctx, "orders", 2, 2)
	require.NoError(t, err)

	before := scrape(t, r)
	require.Equal(t, float64(0), mustValue(t, before, "pystream_appended_records_total", nil))
	fsyncs := mustValue(t, before, "pystream_fsync_duration_seconds", map[string]string{"kind": "file"})
	require.Positive(t, fsyncs, "creating the topic wrote cluster.meta")

	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("abc")}, {Value: []byte("de")}, {Key: []byte("k"), Value: []byte("f")}})
	require.NoError(t, err)
	_, err = r.client.ProduceRaw(ctx, "orders", nil, []byte("ghij"))
	require.NoError(t, err)

	after := scrape(t, r)
	require.Equal(t, float64(4), mustValue(t, after, "pystream_appended_records_total", nil))
	require.Equal(t, float64(10), mustValue(t, after, "pystream_appended_bytes_total", nil))
	require.Equal(t, float64(2), mustValue(t, after, "pystream_append_duration_seconds", nil), "two produce calls")
	require.Greater(t, mustValue(t, after, "pystream_fsync_duration_seconds", map[string]string{"kind": "file"}), fsyncs)
	require.Equal(t, float64(0), mustValue(t, after, "pystream_replication_failures_total", nil))

	// Per-partition gauges, read from the cluster at scrape time.
	var hw float64
	for _, p := range []string{"0", "1"} {
		h := mustValue(t, after, "pystream_partition_high_watermark_offset", map[string]string{"topic": "orders", "partition": p})
		require.Equal(t, h, mustValue(t, after, "pystream_partition_log_end_offset", map[string]string{"topic": "orders", "partition": p}))
		hw += h
	}
	require.Equal(t, float64(4), hw)
	require.Equal(t, float64(0), mustValue(t, after, "pystream_replica_lag_records", map[string]string{"topic": "orders", "partition": "0", "broker": "2"}))
	require.Equal(t, float64(1), mustValue(t, after, "pystream_broker_available", map[string]string{"broker": "1"}))

	// HTTP requests by route pattern, method and status.
	route := map[string]string{"route": "POST /api/topics/{topic}/records", "method": "POST", "status": "200"}
	require.Equal(t, float64(2), mustValue(t, after, "pystream_http_requests_total", route))
	require.Equal(t, float64(2), mustValue(t, after, "pystream_http_request_duration_seconds", route))

	// Stopping broker 2 shows in the gauges: its replicas' log ends and
	// lags become unknown (absent), never zero. A write to partition 0
	// (leader 1, follower 2) is stored by the leader but not replicated:
	// a replication failure and a 503.
	_, err = r.client.StopBroker(ctx, 2)
	require.NoError(t, err)
	key := []byte("k")
	for topic.PartitionForKey(key, 2) != 0 {
		key = append(key, 'k')
	}
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Key: key, Value: []byte("x")}})
	apiErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable)
	stopped := scrape(t, r)
	require.Equal(t, float64(0), mustValue(t, stopped, "pystream_broker_available", map[string]string{"broker": "2"}))
	_, ok := value(t, stopped, "pystream_replica_log_end_offset", map[string]string{"topic": "orders", "partition": "0", "broker": "2"})
	require.False(t, ok)
	_, ok = value(t, stopped, "pystream_replica_lag_records", map[string]string{"topic": "orders", "partition": "0", "broker": "2"})
	require.False(t, ok)
	require.Equal(t, float64(1), mustValue(t, stopped, "pystream_replication_failures_total", nil))
	require.Equal(t, float64(4), mustValue(t, stopped, "pystream_appended_records_total", nil), "the refused record is not counted")
	require.Equal(t, float64(1), mustValue(t, stopped, "pystream_http_requests_total",
		map[string]string{"route": "POST /api/topics/{topic}/records", "method": "POST", "status": "503"}))
}

// Label values of the HTTP metrics are bounded: a client inventing methods
// or paths cannot grow the registry.
func TestMetricsHTTPLabelsBounded(t *testing.T) {
	m := newMetrics()
	for _, method := range []string{"FOO", "BAR", "get"} {
		m.observeHTTP("", method, 405, 0)
	}
	m.observeHTTP("", http.MethodGet, 404, 0)
	fams, err := m.registry.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != "pystream_http_requests_total" {
			continue
		}
		got := map[string]float64{}
		for _, mm := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mm.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["route"]+" "+labels["method"]+" "+labels["status"]] = mm.GetCounter().GetValue()
		}
		require.Equal(t, map[string]float64{"unmatched other 405": 3, "unmatched GET 404": 1}, got)
		return
	}
	t.Fatal("pystream_http_requests_total not exported")
}
