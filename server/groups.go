package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/group"
)

// This file wires the consumer groups (package server/group) into the
// server: the registry both coordinators share with their metrics
// (pystream_group_*), Kafka's classic coordinator, which the Kafka
// listener serves (kafka_wiring.go), the HTTP groups' coordinator, which
// server/httpapi serves, and in cluster mode the rule that one node
// coordinates every group
// (docs/groups.md § Cluster mode). Membership is soft state, rebuilt by
// the members' joins after a restart; what survives is each group's
// leases, saved beside the committed offsets (cluster.SaveGroupLeases), so
// that a coordinator that starts withholds only the partitions a member
// of the one before could still be reading. The offsets members commit
// are the consumers' durable offsets (the group id is the consumer id).

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
		Save:              s.saveGroupLeases,
		Logger:            s.logger.With(slog.String("protocol", "http")),
	})
	return nil
}

// metaCluster is the cluster whose store keeps the committed offsets
// and the groups' leases: the embedded one, or this node's.
func (s *Server) metaCluster() *cluster.Cluster {
	if s.local != nil {
		return s.local.Cluster
	}
	return s.node.Cluster()
}

// saveGroupLeases is the HTTP groups' ConsumerConfig.Save: the leases go
// where the committed offsets go, through the same path.
func (s *Server) saveGroupLeases(group string, leases []byte) error {
	return s.metaCluster().SaveGroupLeases(group, leases)
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

// groupSession is the HTTP groups' session timeout.
func (s *Server) groupSession() time.Duration {
	return cmp.Or(s.cfg.GroupSessionTimeout.Duration(), group.DefaultSessionTimeout)
}

// startGroups starts the embedded cluster's coordinators: after a
// restart, the members of the server that ran before may still read
// their partitions, so the HTTP groups' coordinator reads back the leases
// it saved, and withholds each partition whose owner's lease has not
// ended until it ends; everything else is assigned at once
// (docs/groups.md § Restarts and a new coordinator). Leases that cannot
// be read withhold what nobody claims for a session timeout, as before
// leases were saved. In cluster mode the coordinators start when this
// node leads (leaderChanged).
func (s *Server) startGroups() {
	states, err := s.local.Cluster.GroupLeases()
	if err != nil {
		s.logger.Warn("consumer groups: saved leases unreadable; unclaimed partitions wait a session timeout", "err", err)
		s.consumerGroups.Withhold(s.groupSession())
		return
	}
	if err := s.consumerGroups.Restore(states, 0); err != nil {
		s.logger.Warn("consumer groups: some saved leases were not restored", "err", err)
	}
}

// restoreGroups reads the groups' saved leases once this node, which
// has just started coordinating, knows its copy of the metadata holds
// every command committed before (a barrier), and gives them to the
// HTTP groups' coordinator, ending the window ticket opened. It gives up
// when the server closes or the node stops coordinating; the window then
// ends on its own.
func (s *Server) restoreGroups(ticket uint64) {
	select {
	case <-s.nodeOpen:
	case <-s.groupsStop:
		return
	}
	for s.coordinating.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := s.node.Barrier(ctx)
		cancel()
		if err == nil {
			states, err := s.node.Cluster().GroupLeases()
			if err == nil {
				err = s.consumerGroups.Restore(states, ticket)
			}
			if err != nil {
				s.logger.Warn("consumer groups: some saved leases were not restored", "err", err)
			}
			return
		}
		s.logger.Warn("consumer groups: this node's copy of the metadata is not caught up yet; saved leases not read", "err", err)
		select {
		case <-s.groupsStop:
			return
		case <-time.After(time.Second):
		}
	}
}

// groupCoordinator is the one rule of where consumer groups live, which
// the HTTP API (notCoordinator) and the Kafka listener (groupDirectory)
// both follow: here reports whether this server coordinates them, id
// names the node that does. In the embedded cluster this server
// coordinates every group. In cluster mode the node that leads the
// metadata group does (the controller), from the moment its leadership
// notification has emptied its coordinators (leaderChanged) until it has
// lost it; id is 0 while no node is known to, and while this node leads
// but has not taken the groups over yet.
func (s *Server) groupCoordinator() (id int, here bool) {
	if s.node == nil {
		return 0, true
	}
	if s.coordinating.Load() {
		return int(s.cfg.NodeID), true
	}
	if id = s.node.Controller(); id == int(s.cfg.NodeID) {
		return 0, false
	}
	return id, false
}

// groupHome is the server's rule as a backend.GroupHome, which the HTTP
// API and, in cluster mode, the Kafka listener follow.
type groupHome struct{ s *Server }

// GroupCoordinator is Server.groupCoordinator.
func (h groupHome) GroupCoordinator() (int, bool) { return h.s.groupCoordinator() }

// leaderChanged is the cluster node's leadership notification
// (clusternode.Config.LeaderChanged): when this node starts or stops
// leading the metadata group, both coordinators forget every group — the
// members of a coordinator that stopped join the new one again, and a new
// coordinator starts empty. A new one reads the groups' saved leases
// (restoreGroups); until it has, it withholds unclaimed partitions when
// another coordinator may have had members (this node ran before, or
// another node led). It is called from one goroutine, possibly before
// the node is open.
func (s *Server) leaderChanged(leader int) {
	self := int(s.cfg.NodeID)
	if leader != 0 && leader != self {
		s.otherLed = true
	}
	if (leader == self) == s.coordinating.Load() {
		return
	}
	s.coordinating.Store(false)
	s.classic.Clear()
	s.consumerGroups.Clear()
	if leader != self {
		s.logger.Info("consumer groups: this node no longer coordinates them", "leader", leader)
		return
	}
	var window time.Duration
	if s.restarted || s.otherLed {
		window = s.groupSession()
	}
	ticket := s.consumerGroups.Withhold(window)
	s.coordinating.Store(true)
	go s.restoreGroups(ticket)
	s.logger.Info("consumer groups: this node coordinates them (it leads the metadata group)", "withheld", s.restarted || s.otherLed)
}
