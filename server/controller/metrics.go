package controller

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/cluster"
)

// metrics are the controller's Prometheus metrics.
type metrics struct {
	actions        *prometheus.CounterVec
	leaderRecovery prometheus.Histogram
	notReady       prometheus.Gauge
	inactive       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pystream_controller_actions_total",
			Help: "Actions the controller carried out, by kind (catch-up, deactivate, failover, recover, move-leader) and result (ok, error, or unneeded: it found nothing to do).",
		}, []string{"kind", "result"}),
		leaderRecovery: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "pystream_controller_leader_recovery_seconds",
			Help:    "Time from a partition's leader first seen unavailable to the controller's failover to a new leader.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 10, 30, 60},
		}),
		notReady: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pystream_controller_partitions_not_ready",
			Help: "Problems keeping the cluster from being ready at the last pass (a partition without an available leader, a replica log not open).",
		}),
		inactive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pystream_controller_followers_inactive",
			Help: "Assigned followers outside their partition's active set at the last pass.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.actions, m.leaderRecovery, m.notReady, m.inactive} {
		if err := reg.Register(c); err != nil {
			return nil, errors.Join(errors.New("controller: register metrics"), err)
		}
	}
	return m, nil
}

// action counts one carried-out action; changed is false when it found
// nothing to do.
func (m *metrics) action(kind cluster.ActionKind, changed bool, err error) {
	result := "ok"
	switch {
	case err != nil:
		result = "error"
	case !changed:
		result = "unneeded"
	}
	m.actions.WithLabelValues(string(kind), result).Inc()
}

// observePass sets the gauges from one pass's snapshot.
func (m *metrics) observePass(in cluster.PlanInput, notReady []string) {
	m.notReady.Set(float64(len(notReady)))
	inactive := 0
	for _, p := range in.Partitions {
		for _, r := range p.Replicas {
			if r.BrokerID != p.Leader && !r.Active {
				inactive++
			}
		}
	}
	m.inactive.Set(float64(inactive))
}
