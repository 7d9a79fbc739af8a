package server

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/nodebackend"
	"github.com/pystream/pystream/server/syntax"
)

// NodeID is this process's broker id in cluster mode (PYSTREAM_NODE_ID);
// zero is the embedded cluster of logical brokers.
type NodeID int

// Decode parses a decimal node id from 1 to MaxBrokers; empty is zero.
func (id *NodeID) Decode(s string) error {
	if s == "" || s == "0" {
		*id = 0
		return nil
	}
	n, err := parseDecimal(s, 1, MaxBrokers)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal integer from 1 to " + strconv.Itoa(MaxBrokers), Err: err}
	}
	*id = NodeID(n)
	return nil
}

// ClusterList is PYSTREAM_CLUSTER: every node of a cluster-mode cluster
// with its internal address, "1=host1:7001,2=host2:7001,3=host3:7001".
type ClusterList map[int]string

// Decode parses the list: ids from 1 to MaxBrokers, each once, each with a
// host:port.
func (l *ClusterList) Decode(s string) error {
	out := ClusterList{}
	if strings.TrimSpace(s) == "" {
		*l = nil
		return nil
	}
	allowed := "comma-separated id=host:port entries, ids 1 to " + strconv.Itoa(MaxBrokers) + " each once, e.g. 1=127.0.0.1:7001,2=127.0.0.1:7002"
	for _, item := range strings.Split(s, ",") {
		idText, addr, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return &ConfigError{Value: s, Allowed: allowed}
		}
		id, err := parseDecimal(idText, 1, MaxBrokers)
		if err != nil {
			return &ConfigError{Value: s, Allowed: allowed, Err: err}
		}
		if !syntax.ValidAddr(addr) {
			return &ConfigError{Value: s, Allowed: allowed}
		}
		if _, dup := out[int(id)]; dup {
			return &ConfigError{Value: s, Allowed: allowed, Err: fmt.Errorf("node %d listed twice", id)}
		}
		out[int(id)] = addr
	}
	*l = out
	return nil
}

// String renders the list as Decode reads it, ids ascending.
func (l ClusterList) String() string {
	ids := make([]int, 0, len(l))
	for id := range l {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%d=%s", id, l[id])
	}
	return strings.Join(parts, ",")
}

// RouteList is PYSTREAM_INTERNAL_ROUTES: "host:port=host:port,...", each
// advertised internal address and the address to dial for it.
type RouteList map[string]string

// Decode parses the list.
func (l *RouteList) Decode(s string) error {
	out := RouteList{}
	allowed := "comma-separated addr=via pairs, each a host:port, e.g. 127.0.0.1:7002=127.0.0.1:9002"
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		from, via, ok := strings.Cut(item, "=")
		if !ok || !syntax.ValidAddr(from) || !syntax.ValidAddr(via) {
			return &ConfigError{Value: s, Allowed: allowed}
		}
		if _, dup := out[from]; dup {
			return &ConfigError{Value: s, Allowed: allowed, Err: fmt.Errorf("%s routed twice", from)}
		}
		out[from] = via
	}
	*l = out
	return nil
}

// ClusterMode reports whether the configuration runs this process as one
// node of a cluster of processes.
func (c Config) ClusterMode() bool { return c.NodeID > 0 }

// validateClusterMode checks that PYSTREAM_NODE_ID and PYSTREAM_CLUSTER go
// together.
func (c Config) validateClusterMode() error {
	switch {
	case c.NodeID == 0 && len(c.Cluster) > 0:
		return &ConfigError{Var: EnvPrefix + "_NODE_ID", Value: "", Allowed: "this node's id in PYSTREAM_CLUSTER (cluster mode needs both)"}
	case c.NodeID > 0 && len(c.Cluster) == 0:
		return &ConfigError{Var: EnvPrefix + "_CLUSTER", Value: "", Allowed: "every node's id=host:port (cluster mode needs both)"}
	case c.NodeID > 0:
		if _, ok := c.Cluster[int(c.NodeID)]; !ok {
			return &ConfigError{Var: EnvPrefix + "_NODE_ID", Value: strconv.Itoa(int(c.NodeID)), Allowed: "one of the ids of PYSTREAM_CLUSTER " + c.Cluster.String()}
		}
	}
	return nil
}

// openClusterNode starts this process's node of a cluster of processes.
func (s *Server) openClusterNode(fsys durable.FS) error {
	cfg := clusternode.Config{
		ID: int(s.cfg.NodeID), Peers: s.cfg.Cluster, Join: bool(s.cfg.Join), DataDir: s.cfg.DataDir, Routes: s.cfg.InternalRoutes,
		HTTPAddr: s.cfg.Addr(), KafkaAddr: s.cfg.kafkaAddr(), FailoverAfter: s.cfg.FailoverAfter.Duration(),
		DefaultFailoverAfter: DefaultFailoverAfter, Logger: s.logger, Registerer: s.metrics.registry,
		TopicDefaults: s.cfg.TopicDefaults(), Broker: s.brokerOptions(fsys),
		LeaderChanged: s.leaderChanged, Advanced: s.advances.Advanced, TLS: s.clusterTLS,
	}
	if s.nodeConfig != nil {
		s.nodeConfig(&cfg)
	}
	node, err := clusternode.Open(cfg)
	if err != nil {
		return fmt.Errorf("server: start cluster node %d: %w", s.cfg.NodeID, err)
	}
	s.logSyncs(node.Cluster())
	nb := nodebackend.New(node)
	s.node, s.cluster, s.members = node, nb, nb
	close(s.nodeOpen)
	return nil
}
