package kafka

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metrics are the listener's per-API metrics. The label values are the
// table's API names and the error codes the handlers produce: a fixed,
// small set whatever clients send. Safe for concurrent use.
type metrics struct {
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	bad      prometheus.Counter
}

// latencyBuckets are the request latency histogram's, in seconds.
var latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

func newMetrics(reg prometheus.Registerer, apis []api) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pystream_kafka_requests_total",
			Help: "Kafka protocol requests answered, by API.",
		}, []string{"api"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pystream_kafka_errors_total",
			Help: "Kafka error codes in answers (one per failed topic or partition), by API and code.",
		}, []string{"api", "code"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pystream_kafka_request_duration_seconds",
			Help:    "Time from a Kafka request's decoding to its answer, by API (a fetch's wait included).",
			Buckets: latencyBuckets,
		}, []string{"api"}),
		bad: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pystream_kafka_refused_connections_total",
			Help: "Kafka connections closed for a bad frame: too large, truncated, malformed, an unknown API key or version.",
		}),
	}
	for _, a := range apis {
		m.requests.WithLabelValues(a.key.Name())
		m.seconds.WithLabelValues(a.key.Name())
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requests, m.errors, m.seconds, m.bad} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// observe counts one answered request of key, its latency and its codes.
func (m *metrics) observe(key int16, d time.Duration, codes []int16) {
	name := kmsg.NameForKey(key)
	m.requests.WithLabelValues(name).Inc()
	m.seconds.WithLabelValues(name).Observe(d.Seconds())
	for _, c := range codes {
		m.errors.WithLabelValues(name, strconv.Itoa(int(c))).Inc()
	}
}

// refused counts a connection closed for a bad frame.
func (m *metrics) refused() { m.bad.Inc() }
