package server

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/pystream/pystream/server/group"
)

// This file wires the consumer groups (package server/group) into the
// server: the registry both coordinators share with their metrics
// (pystream_group_*), Kafka's classic coordinator, which the Kafka
// listener serves (kafka_wiring.go), the HTTP groups' coordinator, and in
// cluster mode the rule that one node coordinates every group
// (docs/groups.md § Cluster mode). Membership is soft state, rebuilt by
// the members' joins after a restart; the offsets members commit are the
// consumers' durable offsets (the group id is the consumer id).

// openGroups builds the group registry, the group metrics and both
// coordinators.
func (s *Server) openGroups() error {
	m, err := group.NewMetrics(s.metrics.registry)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.groups = group.NewRegistry()
	s.classic = group.NewClassicCoordinator(s.groups, group.ClassicConfig{
		InitialDelay:      s.cfg.GroupInitialDelay.Duration(),
		MinSessionTimeout: s.cfg.GroupMinSessionTimeout.Duration(),
		Metrics:           m,
		Logger:            s.logger.With(slog.String("protocol", "kafka")),
	})
	s.consumerGroups = group.NewConsumerCoordinator(group.ConsumerConfig{
		SessionTimeout:    s.cfg.GroupSessionTimeout.Duration(),
		HeartbeatInterval: s.cfg.GroupHeartbeatInterval.Duration(),
		Registry:          s.groups,
		Topics:            s.partitionCounts,
		Metrics:           m,
	})
	return nil
}

// partitionCounts is the partition count of each of names the cluster
// has: one listing of the topics, which waits for nothing.
func (s *Server) partitionCounts(names []string) map[string]int32 {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	out := make(map[string]int32, len(names))
	for _, t := range s.cluster.Topics() {
		if want[t.Name] {
			out[t.Name] = int32(t.PartitionCount)
		}
	}
	return out
}

// groupListers are the coordinators whose groups GET /api/groups lists:
// the HTTP groups' and Kafka's classic ones.
func (s *Server) groupListers() []group.Lister {
	return []group.Lister{s.consumerGroups, s.classic}
}

// notCoordinator returns nil when this server coordinates groups: always
// in the embedded cluster, and in cluster mode on the node that leads the
// metadata group (the controller), so that every group lives on one node.
// On another node it is a 421 not_coordinator naming the coordinator's
// HTTP address, which apiclient follows; and this node forgets the groups
// it held when it coordinated, whose members join again there. Without a
// controller (an election) it is a 503.
func (s *Server) notCoordinator() *apiError {
	if s.node == nil {
		return nil
	}
	controller, nodes, err := s.node.ClusterNodes()
	if err != nil {
		return classify(err)
	}
	if controller == int(s.cfg.NodeID) {
		return nil
	}
	s.consumerGroups.Clear()
	addr := ""
	for _, n := range nodes {
		if n.ID == controller {
			addr = n.HTTPAddr
		}
	}
	if controller == 0 || addr == "" {
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"groups are coordinated by the cluster's controller, and there is none now (an election is under way); try again")
		if controller != 0 {
			e.body.Message = fmt.Sprintf("groups are coordinated by the cluster's controller, node %d, whose HTTP address is not known yet; try again", controller)
		}
		return e
	}
	return notCoordinatorError(controller, addr)
}

// notCoordinatorError is the 421 that sends a group request to node id,
// the coordinator, at its HTTP address addr.
func notCoordinatorError(id int, addr string) *apiError {
	e := newAPIError(http.StatusMisdirectedRequest, CodeNotCoordinator,
		"node %d coordinates groups (it is the cluster's controller): send group requests to %s", id, addr)
	e.body.Coordinator = addr
	return e
}
