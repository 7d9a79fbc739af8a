package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the API's Prometheus metrics: its requests, by route, method
// and status, and the produce path's appends. Every metric on the produce
// path is an unlabelled counter or histogram, updated with atomic
// operations: recording never takes a lock that a produce request holds
// or waits for. The HTTP metrics resolve their label values once per
// route, method and status and keep the result in a sync.Map, read without
// locking. They are registered on Config.Registerer, the server's
// registry, which GET /metrics (Config.Metrics) serves with the rest.
//
// A metrics value is safe for concurrent use.
type metrics struct {
	appendedRecords     prometheus.Counter
	appendedBytes       prometheus.Counter
	appendSeconds       prometheus.Histogram
	replicationFailures prometheus.Counter

	httpRequests *prometheus.CounterVec
	httpSeconds  *prometheus.HistogramVec
	// httpCache maps httpKey to *httpObservers.
	httpCache sync.Map
}

type httpKey struct {
	pattern, method string
	status          int
}

type httpObservers struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// LatencyBuckets are the buckets of the server's latency histograms, in
// seconds: from 50 µs (a page-cache fdatasync on a fast disk) to 5 s.
var LatencyBuckets = []float64{
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
	0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
}

// newMetrics builds the API's metrics and registers them on reg (none
// when nil).
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{}
	m.appendedRecords = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pystream_appended_records_total",
		Help: "Records acknowledged by produce requests (stored by every active replica).",
	})
	m.appendedBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pystream_appended_bytes_total",
		Help: "Payload bytes of the records counted by pystream_appended_records_total, as stored (a record's key and headers included).",
	})
	m.appendSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "pystream_append_duration_seconds",
		Help:    "Time a produce request spends in the cluster: routing, leader append, follower appends, each with its fsync.",
		Buckets: LatencyBuckets,
	})
	m.replicationFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pystream_replication_failures_total",
		Help: "Partition writes the leader stored but an active follower did not (never acknowledged).",
	})
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pystream_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status.",
	}, []string{"route", "method", "status"})
	m.httpSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pystream_http_request_duration_seconds",
		Help:    "Time from the request's arrival to the end of the handler, by route pattern, method and status.",
		Buckets: LatencyBuckets,
	}, []string{"route", "method", "status"})
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.appendedRecords, m.appendedBytes, m.appendSeconds, m.replicationFailures, m.httpRequests, m.httpSeconds} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observeHTTP records one answered request. pattern is the ServeMux pattern
// that matched ("" when none did).
func (m *metrics) observeHTTP(pattern, method string, status int, d time.Duration) {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions:
	default:
		// Clients choose the method: an unbounded set of label values
		// would let them grow the registry without limit.
		method = "other"
	}
	key := httpKey{pattern, method, status}
	o, ok := m.httpCache.Load(key)
	if !ok {
		route := pattern
		if route == "" {
			route = "unmatched"
		}
		labels := []string{route, method, strconv.Itoa(status)}
		o, _ = m.httpCache.LoadOrStore(key, &httpObservers{
			count:   m.httpRequests.WithLabelValues(labels...),
			latency: m.httpSeconds.WithLabelValues(labels...),
		})
	}
	obs := o.(*httpObservers)
	obs.count.Inc()
	obs.latency.Observe(d.Seconds())
}

// observeAppend records one produce call into the cluster.
func (m *metrics) observeAppend(records int, bytes int, d time.Duration) {
	m.appendSeconds.Observe(d.Seconds())
	if records > 0 {
		m.appendedRecords.Add(float64(records))
		m.appendedBytes.Add(float64(bytes))
	}
}
