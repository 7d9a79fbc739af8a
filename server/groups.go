package server

import (
	"log/slog"

	"github.com/pystream/pystream/server/group"
)

// Consumer groups (package server/group). One Registry keeps each group
// to one membership protocol, so every coordinator the server runs gets
// the same one, and the same Metrics (pystream_group_*). The classic
// coordinator is Kafka's join/sync protocol, served by the Kafka
// listener (kafka_wiring.go); its state is soft, rebuilt by the members'
// joins after a restart, and the offsets its members commit are the
// consumers' durable offsets (the group id is the consumer id).

// openGroups builds the registry, the group metrics and the classic
// coordinator with the configuration's initial delay and shortest
// session timeout.
func (s *Server) openGroups() error {
	m, err := group.NewMetrics(s.metrics.registry)
	if err != nil {
		return err
	}
	s.groups, s.groupMetrics = group.NewRegistry(), m
	s.classic = group.NewClassicCoordinator(s.groups, group.ClassicConfig{
		InitialDelay:      s.cfg.GroupInitialDelay.Duration(),
		MinSessionTimeout: s.cfg.GroupMinSessionTimeout.Duration(),
		Metrics:           m,
		Logger:            s.logger.With(slog.String("protocol", "kafka")),
	})
	return nil
}
