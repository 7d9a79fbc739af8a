package server

import (
	"fmt"
	"net/http"

	"github.com/pystream/pystream/server/group"
)

// This file wires the consumer groups (package server/group) into the
// server: the registry both coordinators share, the HTTP groups'
// coordinator, and in cluster mode the rule that one node coordinates
// every group (docs/groups.md § Cluster mode).

// openGroups builds the group registry and the HTTP groups' coordinator,
// its metrics registered with the server's.
func (s *Server) openGroups() error {
	s.groups = group.NewRegistry()
	m, err := group.NewPrometheusMetrics(s.metrics.registry)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
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
// the HTTP groups', and the classic one once it is wired.
func (s *Server) groupListers() []group.Lister {
	out := []group.Lister{s.consumerGroups}
	if s.classicGroups != nil {
		out = append(out, s.classicGroups)
	}
	return out
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
