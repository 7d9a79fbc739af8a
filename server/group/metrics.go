package group

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the coordinators' per-group series, shared by both
// protocols: members and generation (a consumer group's epoch) by group
// and protocol, and the rebalances each group went through. A group's
// series are removed when it has no members left (Forget), so that
// client-chosen group ids do not grow the registry for ever. A nil
// *Metrics records nothing; a Metrics is safe for concurrent use.
type Metrics struct {
	members    *prometheus.GaugeVec
	generation *prometheus.GaugeVec
	rebalances *prometheus.CounterVec
}

// NewMetrics registers the group metrics with reg (nil registers
// nothing). Both coordinators of a server may call it with the same
// registry: a second call returns metrics sharing the collectors the
// first registered.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		members: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pystream_group_members",
			Help: "Members of a consumer group, by group and membership protocol (classic: Kafka's JoinGroup; consumer: the HTTP heartbeat).",
		}, []string{"group", "protocol"}),
		generation: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pystream_group_generation",
			Help: "A consumer group's generation (classic) or epoch (consumer): it grows by one at every completed rebalance.",
		}, []string{"group", "protocol"}),
		rebalances: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pystream_group_rebalances_total",
			Help: "Rebalances a consumer group started since it last had members: a member joined, left, timed out or changed its subscription.",
		}, []string{"group", "protocol"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.members, err = register(reg, m.members); err != nil {
		return nil, err
	}
	if m.generation, err = register(reg, m.generation); err != nil {
		return nil, err
	}
	if m.rebalances, err = register(reg, m.rebalances); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c with reg, or returns the collector of the same
// description already there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// Members sets group's member count.
func (m *Metrics) Members(group string, p Protocol, n int) {
	if m != nil {
		m.members.WithLabelValues(group, string(p)).Set(float64(n))
	}
}

// Generation sets group's generation (or epoch).
func (m *Metrics) Generation(group string, p Protocol, generation int32) {
	if m != nil {
		m.generation.WithLabelValues(group, string(p)).Set(float64(generation))
	}
}

// Rebalance counts one rebalance of group.
func (m *Metrics) Rebalance(group string, p Protocol) {
	if m != nil {
		m.rebalances.WithLabelValues(group, string(p)).Inc()
	}
}

// Forget removes group's series: it has no members left.
func (m *Metrics) Forget(group string, p Protocol) {
	if m != nil {
		m.members.DeleteLabelValues(group, string(p))
		m.generation.DeleteLabelValues(group, string(p))
		m.rebalances.DeleteLabelValues(group, string(p))
	}
}
