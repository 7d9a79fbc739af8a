package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
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
		k, err := kafka.New(kafkaBackend{s.cluster}, kafka.Config{
			Host:             s.cfg.Host,
			AdvertisedHost:   s.cfg.KafkaAdvertisedHost,
			Port:             int(s.cfg.KafkaPort),
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

// --- Administration and stored offsets over Kafka (CreateTopics,
// DeleteTopics, FindCoordinator, OffsetCommit, OffsetFetch). ---

// kafkaBackend is the backend as the Kafka listener's handle: the
// backend's own methods, with one error translated into the listener's
// terms — a mode that does not delete topics (cluster mode) says so with
// errors.ErrUnsupported, which DeleteTopics answers
// TOPIC_DELETION_DISABLED.
type kafkaBackend struct{ Backend }

var _ kafka.Cluster = kafkaBackend{}

// DeleteTopic is the backend's, its "not in this mode" refusal also
// matching errors.ErrUnsupported.
func (b kafkaBackend) DeleteTopic(name string) (cluster.DeleteTopicResult, error) {
	res, err := b.Backend.DeleteTopic(name)
	if errors.Is(err, clusternode.ErrNotInClusterMode) {
		err = fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
	}
	return res, err
}
