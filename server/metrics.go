package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/clustermetrics"
	"github.com/pystream/pystream/server/httpapi"
)

// metrics holds the server's Prometheus registry (never the global
// default, so two servers in one process, as in tests, do not collide),
// which every piece registers its metrics on — the HTTP API its requests
// and appends (server/httpapi), the Kafka listener, the controller and the
// consumer groups theirs — and GET /metrics serves. The server's own are
// the fsync latencies of the storage (timedFS) and the per-partition and
// per-consumer gauges computed at scrape time (server/clustermetrics).
//
// A metrics value is safe for concurrent use.
type metrics struct {
	registry *prometheus.Registry

	fsyncSeconds *prometheus.HistogramVec
	fsyncFile    prometheus.Observer
	fsyncDir     prometheus.Observer
	fsyncFS      prometheus.Observer
}

func newMetrics() *metrics {
	m := &metrics{registry: prometheus.NewRegistry()}
	m.fsyncSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pystream_fsync_duration_seconds",
		Help:    "Duration of every fsync the storage issues: kind=file for data syncs of one file (metadata, and log appends whenever their syncs are not shared: see the start-up log line), kind=dir for directory syncs, kind=filesystem for the syncs of the whole file system that the replica logs' appends share.",
		Buckets: httpapi.LatencyBuckets,
	}, []string{"kind"})
	m.fsyncFile = m.fsyncSeconds.WithLabelValues("file")
	m.fsyncDir = m.fsyncSeconds.WithLabelValues("dir")
	m.fsyncFS = m.fsyncSeconds.WithLabelValues("filesystem")
	m.registry.MustRegister(
		m.fsyncSeconds,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// registerCluster adds the collectors of per-partition and per-consumer
// gauges (server/clustermetrics).
func (m *metrics) registerCluster(c backend.Data) {
	if err := clustermetrics.Register(m.registry, c); err != nil {
		panic(err) // two collectors of the same gauges: a programming error
	}
}
