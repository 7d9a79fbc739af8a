package server

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"strconv"

	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/server/nodebackend"
)

// The Kafka listener (package server/kafka) serves the server's backend.
// In the embedded cluster it is one listener per logical broker, on
// PYSTREAM_KAFKA_PORT + id - 1, opened and closed with the broker. In
// cluster mode each process serves its own broker's listener alone, on its
// own PYSTREAM_KAFKA_PORT, registers the advertised address in the
// replicated metadata (kafkaAddr), and Metadata lists every node's
// registered address. The backend has every method kafka.Cluster asks
// for, so it is handed over as it is; in cluster mode groupDirectory is
// the kafka.Directory.
var (
	_ kafka.Cluster   = clusterBackend(nil)
	_ kafka.Directory = groupDirectory{}
)

// kafkaAddr is the Kafka address a cluster-mode node registers:
// PYSTREAM_KAFKA_ADVERTISED_HOST (else PYSTREAM_HOST) and
// PYSTREAM_KAFKA_PORT; "" when the port is 0 (no listener).
func (c Config) kafkaAddr() string {
	if c.KafkaPort == 0 {
		return ""
	}
	host := c.KafkaAdvertisedHost
	if host == "" {
		host = c.Host
	}
	return net.JoinHostPort(host, strconv.Itoa(int(c.KafkaPort)))
}

// groupDirectory is the Kafka listener's kafka.Directory in cluster mode:
// the node's registered Kafka addresses, and the server's one rule of
// which node coordinates consumer groups (groups.go), which the HTTP API
// follows too. One node, so that a group's membership lives in one
// process; a new leader starts with no groups, and members sent back to
// FindCoordinator join it again, as
// docs/kafka.md § Consumer groups
// tells.
type groupDirectory struct {
	*nodebackend.Backend
	backend.GroupHome
}

// startKafka starts the Kafka listener when the configuration asks for
// it, and returns the function that stops it and waits for its
// connections.
func (s *Server) startKafka() (stop func()) {
	if s.cfg.KafkaPort == 0 && !s.kafkaFreePorts {
		return func() {}
	}
	k := s.kafka.Load()
	if k == nil {
		nodeID, port := 0, int(s.cfg.KafkaPort)
		if s.node != nil {
			nodeID = int(s.cfg.NodeID)
		}
		if s.kafkaFreePorts {
			port = 0 // free ports, even when PYSTREAM_KAFKA_PORT has its default
		}
		var handle kafka.Cluster = s.cluster
		if nb, ok := s.cluster.(*nodebackend.Backend); ok {
			// Cluster mode: the node says where every broker listens.
			handle = groupDirectory{nb, groupHome{s}}
		}
		var err error
		k, err = kafka.New(handle, kafka.Config{
			NodeID:            nodeID,
			Host:              s.cfg.Host,
			AdvertisedHost:    s.cfg.KafkaAdvertisedHost,
			Port:              port,
			MaxRequestBytes:   int(s.maxBody),
			MaxRequestRecords: int(s.cfg.MaxRequestRecords),
			MaxInflightBytes:  cmp.Or(int64(s.cfg.MaxInflightBytes), DefaultMaxInflightBytes),
			FetchMaxBytes:     s.fetchBytes,
			FetchRecheck:      s.kafkaFetchRecheck,
			Advances:          s.advances,
			WriteFailed:       s.cluster.Wake,
			Logger:            s.logger.With(slog.String("protocol", "kafka")),
			Registerer:        s.metrics.registry,
			Groups:            s.classic,
			// ListGroups and DescribeGroups show the HTTP groups too.
			OtherGroups: s.consumerGroups,
			// One auth file and one identity per node, for every port:
			// SASL with the HTTP API's principals, TLS with its
			// certificate (SASL_SSL when both are set).
			Auth: s.auth,
			TLS:  s.tls,
		})
		if err != nil {
			s.logger.Error("kafka listener not started", "err", err)
			return func() {}
		}
		s.kafka.Store(k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = k.Serve(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// KafkaAddr is broker id's Kafka listening address while it has one; ""
// otherwise (for tests and embedding).
func (s *Server) KafkaAddr(id int) string {
	k := s.kafka.Load()
	if k == nil {
		return ""
	}
	return k.Addr(id)
}
