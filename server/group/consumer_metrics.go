package group

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// PrometheusMetrics is Metrics as Prometheus series, labelled by group and
// protocol:
//
//   - pystream_group_members: the group's members;
//   - pystream_group_generation: its generation (classic) or group epoch
//     (consumer);
//   - pystream_group_rebalances_total: its rebalances, one per new
//     generation or group epoch.
//
// A group without members loses its series. Consumer lag per group and
// partition needs nothing here: a group id is a consumer id, so
// pystream_consumer_lag_records{consumer="<group>"} is the group's lag.
// It is safe for concurrent use.
type PrometheusMetrics struct {
	members, generation *prometheus.GaugeVec
	rebalances          *prometheus.CounterVec
}

var _ Metrics = (*PrometheusMetrics)(nil)

// NewPrometheusMetrics registers the group series with reg.
func NewPrometheusMetrics(reg prometheus.Registerer) (*PrometheusMetrics, error) {
	labels := []string{"group", "protocol"}
	m := &PrometheusMetrics{
		members: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pystream_group_members",
			Help: "Members of a group with members."}, labels),
		generation: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pystream_group_generation",
			Help: "A group's generation (classic) or group epoch (consumer)."}, labels),
		rebalances: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pystream_group_rebalances_total",
			Help: "Rebalances of a group: each new generation or group epoch."}, labels),
	}
	for _, c := range []prometheus.Collector{m.members, m.generation, m.rebalances} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("group: register metrics: %w", err)
		}
	}
	return m, nil
}

// Members sets pystream_group_members.
func (m *PrometheusMetrics) Members(group string, p Protocol, n int) {
	m.members.WithLabelValues(group, string(p)).Set(float64(n))
}

// Generation sets pystream_group_generation.
func (m *PrometheusMetrics) Generation(group string, p Protocol, generation int32) {
	m.generation.WithLabelValues(group, string(p)).Set(float64(generation))
}

// Rebalance adds one to pystream_group_rebalances_total.
func (m *PrometheusMetrics) Rebalance(group string, p Protocol) {
	m.rebalances.WithLabelValues(group, string(p)).Inc()
}

// Forget deletes the group's series.
func (m *PrometheusMetrics) Forget(group string, p Protocol) {
	for _, v := range []*prometheus.MetricVec{m.members.MetricVec, m.generation.MetricVec, m.rebalances.MetricVec} {
		v.DeleteLabelValues(group, string(p))
	}
}
