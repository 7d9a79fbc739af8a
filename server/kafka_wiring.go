package server

import (
	"context"
	"log/slog"

	"github.com/pystream/pystream/server/kafka"
)

// The Kafka listener (package server/kafka) serves the backend of the
// embedded cluster: one listener per logical broker, on PYSTREAM_KAFKA_PORT
// + id - 1, opened and closed with the broker. Backend has every method
// kafka.Cluster asks for, so it is handed over as it is.
var _ kafka.Cluster = Backend(nil)

// startKafka starts the Kafka listener when the configuration asks for
// it, and returns the function that stops it and waits for its
// connections. Cluster mode does not serve Kafka yet: each node would
// serve its own broker's listener and advertise the node's address; that
// is where this function grows a second branch (s.node != nil).
func (s *Server) startKafka() (stop func()) {
	if s.cfg.KafkaPort == 0 && !s.kafkaFreePorts {
		return func() {}
	}
	if s.local == nil {
		s.logger.Info("kafka listener not started: cluster mode does not serve the Kafka protocol yet")
		return func() {}
	}
	if s.kafka == nil {
		port := int(s.cfg.KafkaPort)
		if s.kafkaFreePorts {
			port = 0 // each broker takes a free port (tests)
		}
		k, err := kafka.New(s.cluster, kafka.Config{
			Host:             s.cfg.Host,
			AdvertisedHost:   s.cfg.KafkaAdvertisedHost,
			Port:             port,
			MaxRequestBytes:  int(s.maxBody),
			MaxInflightBytes: s.inflight.limit,
			FetchMaxBytes:    s.fetchBytes,
			Logger:           s.logger.With(slog.String("protocol", "kafka")),
			Registerer:       s.metrics.registry,
		})
		if err != nil {
			s.logger.Error("kafka listener not started", "err", err)
			return func() {}
		}
		s.kafka = k
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.kafka.Serve(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// KafkaAddr is broker id's Kafka listening address while it has one; ""
// otherwise (for tests and embedding).
func (s *Server) KafkaAddr(id int) string {
	if s.kafka == nil {
		return ""
	}
	return s.kafka.Addr(id)
}
