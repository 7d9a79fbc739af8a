package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
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
	// Stored bytes: a keyed record is stored with its key, in an envelope.
	keyed := len(envelope.Payload(envelope.Record{Key: []byte("k"), Value: []byte("f")}))
	require.Equal(t, float64(3+2+keyed+4), mustValue(t, after, "pystream_appended_bytes_total", nil))
	require.Equal(t, float64(2), mustValue(t, after, "pystream_append_duration_seconds", nil), "two produce calls")
	// The appends' syncs are fsyncs of each broker's commit journal
	// (PYSTREAM_SHARED_SYNC=journal, the default), shared syncs of the file
	// system (syncfs, where the file system allows), else fsyncs of files.
	wholeBefore := mustValue(t, before, "pystream_fsync_duration_seconds", map[string]string{"kind": "filesystem"})
	wholeAfter := mustValue(t, after, "pystream_fsync_duration_seconds", map[string]string{"kind": "filesystem"})
	fileAfter := mustValue(t, after, "pystream_fsync_duration_seconds", map[string]string{"kind": "file"})
	require.Greater(t, wholeAfter+fileAfter, wholeBefore+fsyncs, "the appends were synced")
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
	apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable)
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

// https://prometheus.io/docs/practices/naming/: a gauge's name ends in its
// unit. Positions in a log end in _offset, distances between two in
// _records; 0/1 gauges keep their names. The names before the rename are
// gone, not kept as aliases.
func TestMetricsGaugeNamesCarryUnits(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 2)
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 2)
	require.NoError(t, err)
	_, err = r.client.CommitOffset(ctx, "billing", "orders", 0, 0)
	require.NoError(t, err)

	fams := scrape(t, r)
	for _, name := range []string{
		"pystream_partition_high_watermark_offset",
		"pystream_partition_log_end_offset",
		"pystream_replica_log_end_offset",
		"pystream_replica_lag_records",
		"pystream_replica_active",
		"pystream_broker_available",
		"pystream_consumer_committed_offset",
		"pystream_consumer_lag_records",
		"pystream_consumer_offset_unreadable_files",
	} {
		f, ok := fams[name]
		require.True(t, ok, "%s is exported", name)
		require.Equal(t, dto.MetricType_GAUGE, f.GetType(), name)
	}
	for _, old := range []string{
		"pystream_partition_high_watermark",
		"pystream_partition_log_end",
		"pystream_replica_log_end",
		"pystream_replica_lag",
	} {
		require.NotContains(t, fams, old)
	}
}

// consumerLabels are the labels of one consumer's series on orders/0.
func consumerLabels(consumer string) map[string]string {
	return map[string]string{"consumer": consumer, "topic": "orders", "partition": "0"}
}

// produceN produces n one-byte records to topic (one partition).
func produceN(t *testing.T, r *running, topicName string, n int) {
	t.Helper()
	recs := make([]apiclient.ProduceRecord, n)
	for i := range recs {
		recs[i] = apiclient.ProduceRecord{Value: []byte("x")}
	}
	_, err := r.client.Produce(t.Context(), topicName, recs)
	require.NoError(t, err)
}

// Consumer lag is Kafka's: the partition's high watermark minus the
// committed offset, per consumer, topic and partition, read from the
// offset files at scrape time; 0 at or past the high watermark.
func TestMetricsConsumerLag(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 3, manual)
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	produceN(t, r, "orders", 5)
	commit := func(consumer string, offset uint64) {
		t.Helper()
		_, err := r.client.CommitOffset(ctx, consumer, "orders", 0, offset)
		require.NoError(t, err)
	}
	commit("billing", 2)
	commit("audit", 5) // at the high watermark
	// The API refuses a commit past the high watermark; an offset file
	// written before it did, or by the library's OffsetStore (which knows
	// no partition end), may still hold one.
	store, err := r.srv.Cluster().OffsetStore()
	require.NoError(t, err)
	require.NoError(t, store.Commit("ahead", "orders", 0, 100))

	lag := func(fams map[string]*dto.MetricFamily, consumer string) float64 {
		t.Helper()
		return mustValue(t, fams, "pystream_consumer_lag_records", consumerLabels(consumer))
	}
	fams := scrape(t, r)
	require.Equal(t, float64(5), mustValue(t, fams, "pystream_partition_high_watermark_offset", map[string]string{"topic": "orders", "partition": "0"}))
	require.Equal(t, float64(2), mustValue(t, fams, "pystream_consumer_committed_offset", consumerLabels("billing")))
	require.Equal(t, float64(3), lag(fams, "billing"), "N-K")
	require.Equal(t, float64(0), lag(fams, "audit"), "committed at the high watermark")
	require.Equal(t, float64(100), mustValue(t, fams, "pystream_consumer_committed_offset", consumerLabels("ahead")))
	require.Equal(t, float64(0), lag(fams, "ahead"), "committed past the high watermark")
	require.Equal(t, float64(0), mustValue(t, fams, "pystream_consumer_offset_unreadable_files", nil))

	// More records: the lag grows; a commit shrinks it.
	produceN(t, r, "orders", 4)
	fams = scrape(t, r)
	require.Equal(t, float64(7), lag(fams, "billing"))
	require.Equal(t, float64(4), lag(fams, "audit"))
	commit("billing", 8)
	require.Equal(t, float64(1), lag(scrape(t, r), "billing"))

	// A stopped broker holding an active replica does not make the high
	// watermark unknown: it stays where it was (cluster.refreshHWLocked),
	// consumers still read up to it, and the lag is still measured
	// against it. The write that broker 3 missed is refused and exposes
	// nothing.
	_, err = r.client.StopBroker(ctx, 3)
	require.NoError(t, err)
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("x")}})
	apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable)
	fams = scrape(t, r)
	require.Equal(t, float64(9), mustValue(t, fams, "pystream_partition_high_watermark_offset", map[string]string{"topic": "orders", "partition": "0"}))
	require.Equal(t, float64(10), mustValue(t, fams, "pystream_partition_log_end_offset", map[string]string{"topic": "orders", "partition": "0"}))
	require.Equal(t, float64(1), lag(fams, "billing"))
}

// A committed offset whose partition the cluster does not know has no high
// watermark: its committed offset is reported, its lag is absent (never a
// made-up 0). The offset store takes any valid topic name, so a program
// embedding the cluster can commit one; the HTTP API refuses to.
func TestMetricsConsumerLagUnknownPartition(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 1)
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	store, err := r.srv.Cluster().OffsetStore()
	require.NoError(t, err)
	require.NoError(t, store.Commit("billing", "ghost", 0, 3))
	require.NoError(t, store.Commit("billing", "orders", 7, 4))
	require.NoError(t, store.Commit("billing", "orders", 0, 0))

	fams := scrape(t, r)
	for _, tp := range []struct {
		topic, partition string
		committed        float64
	}{{"ghost", "0", 3}, {"orders", "7", 4}} {
		labels := map[string]string{"consumer": "billing", "topic": tp.topic, "partition": tp.partition}
		require.Equal(t, tp.committed, mustValue(t, fams, "pystream_consumer_committed_offset", labels))
		_, ok := value(t, fams, "pystream_consumer_lag_records", labels)
		require.False(t, ok, "no lag for %s/%s", tp.topic, tp.partition)
	}
	require.Equal(t, float64(0), mustValue(t, fams, "pystream_consumer_lag_records", consumerLabels("billing")))
}

// One damaged offset file never fails the scrape: its series are absent,
// every other consumer's are there, and
// pystream_consumer_offset_unreadable_files counts it until it is mended.
func TestMetricsConsumerOffsetDamagedFile(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 1)
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	produceN(t, r, "orders", 3)
	for _, c := range []string{"audit", "billing", "search"} {
		_, err = r.client.CommitOffset(ctx, c, "orders", 0, 1)
		require.NoError(t, err)
	}
	path := filepath.Join(r.srv.Cluster().OffsetsDir(), "billing", "orders", client.OffsetFileName(0))
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1, "off`), 0o644))

	fams := scrape(t, r) // a 200 that parses
	require.Equal(t, float64(1), mustValue(t, fams, "pystream_consumer_offset_unreadable_files", nil))
	for _, name := range []string{"pystream_consumer_committed_offset", "pystream_consumer_lag_records"} {
		_, ok := value(t, fams, name, consumerLabels("billing"))
		require.False(t, ok, "%s of the damaged file is absent", name)
	}
	require.Equal(t, float64(2), mustValue(t, fams, "pystream_consumer_lag_records", consumerLabels("audit")))
	require.Equal(t, float64(2), mustValue(t, fams, "pystream_consumer_lag_records", consumerLabels("search")))

	require.NoError(t, os.WriteFile(path, good, 0o644))
	fams = scrape(t, r)
	require.Equal(t, float64(0), mustValue(t, fams, "pystream_consumer_offset_unreadable_files", nil))
	require.Equal(t, float64(2), mustValue(t, fams, "pystream_consumer_lag_records", consumerLabels("billing")))
}

// The consumer gauges cost one read of each offset file per scrape, however
// many consumers and partitions there are, and the reads change nothing.
func TestMetricsConsumerScrapeReadsEachOffsetFileOnce(t *testing.T) {
	cfg := Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Brokers = 1
	ffs := logtest.NewFaultFS(nil)
	srv, err := newServer(cfg, NewLogger(io.Discard, cfg), ffs)
	require.NoError(t, err)
	r := serveExisting(t, srv)
	ctx := t.Context()
	_, _, err = r.client.CreateTopic(ctx, "orders", 3, 1)
	require.NoError(t, err)
	var want []string
	for _, c := range []string{"audit", "billing"} {
		for p := range 3 {
			_, err = r.client.CommitOffset(ctx, c, "orders", p, 0)
			require.NoError(t, err)
			want = append(want, filepath.Join(srv.Cluster().OffsetsDir(), c, "orders", client.OffsetFileName(p)))
		}
	}

	var mu sync.Mutex
	var opened []string
	var writes int
	ffs.SetFault(func(op logtest.Op, path string) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case op == logtest.OpOpen && strings.HasSuffix(path, client.OffsetFileSuffix):
			opened = append(opened, path)
		case op != logtest.OpOpen && op != logtest.OpClose:
			writes++
		}
		return nil
	})
	for range 2 {
		mu.Lock()
		opened = nil
		mu.Unlock()
		fams := scrape(t, r)
		require.Len(t, fams["pystream_consumer_lag_records"].GetMetric(), 6)
		mu.Lock()
		require.ElementsMatch(t, want, opened, "each offset file opened once")
		mu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	require.Zero(t, writes, "scrapes write and sync nothing")
}
