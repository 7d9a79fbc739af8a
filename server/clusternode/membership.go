package clusternode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/netmux"
	"github.com/pystream/pystream/server/raftmeta"
	"github.com/pystream/pystream/server/replication"
)

// NodeView is one node of the metadata group as an operator sees it: the
// shape the protocols answer with, declared beneath them (server/backend).
// A registered broker that was removed is listed with Voter false.
type NodeView = backend.NodeView

// ClusterNodes lists the voters of the metadata group and the registered
// brokers, by id, and names the controller (0 when there is none).
func (n *Node) ClusterNodes() (controller int, nodes []NodeView, err error) {
	servers, err := n.raft.Servers()
	if err != nil {
		return 0, nil, fmt.Errorf("clusternode: list nodes: %w", err)
	}
	controller, _ = n.raft.Leader()
	byID := map[int]*NodeView{}
	for _, s := range servers {
		byID[s.ID] = &NodeView{ID: s.ID, Addr: s.Addr, Voter: s.Voter, Leader: s.ID == controller}
	}
	for _, info := range n.Nodes() {
		v, ok := byID[info.ID]
		if !ok {
			v = &NodeView{ID: info.ID, Addr: info.Addr}
			byID[info.ID] = v
		}
		v.HTTPAddr, v.KafkaAddr = info.HTTPAddr, info.KafkaAddr
	}
	for _, id := range sortedIDs(byID) {
		nodes = append(nodes, *byID[id])
	}
	return controller, nodes, nil
}

func sortedIDs(m map[int]*NodeView) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

// AddNode adds a voter to the metadata group: a node started with
// PYSTREAM_JOIN=on at addr. hashicorp/raft applies the change as one
// configuration entry, committed by the old majority; the new node then
// receives the metadata and registers as a broker.
func (n *Node) AddNode(ctx context.Context, id int, addr string) error {
	return n.membership(ctx, replication.MembershipRequest{Op: replication.MembershipAdd, ID: id, Addr: addr})
}

// RemoveNode takes a voter out of the metadata group (a machine lost for
// good). Its broker stays registered: its replicas leave the active sets
// when its heartbeats stop, and a node started with the same id joins in
// its place (AddNode) and is recovered from the leaders.
func (n *Node) RemoveNode(ctx context.Context, id int) error {
	return n.membership(ctx, replication.MembershipRequest{Op: replication.MembershipRemove, ID: id})
}

// membership applies a change on the metadata leader, forwarding it there.
func (n *Node) membership(ctx context.Context, req replication.MembershipRequest) error {
	if req.ID < 1 {
		return fmt.Errorf("clusternode: node id %d: %w", req.ID, cluster.ErrInvalidBrokerID)
	}
	if n.raft.IsLeader() {
		return n.Membership(ctx, req)
	}
	id, _ := n.raft.Leader()
	if id == 0 {
		return ErrNoLeader
	}
	addr, err := n.addrOf(id)
	if err != nil {
		return err
	}
	return n.rpc.Membership(ctx, addr, req)
}

// Membership applies a change of the metadata group's voters
// (replication.Peer); only its leader does.
func (n *Node) Membership(ctx context.Context, req replication.MembershipRequest) error {
	var err error
	switch req.Op {
	case replication.MembershipAdd:
		if req.Addr == "" {
			return replication.Errorf(replication.CodeBadRequest, "adding node %d needs its internal address", req.ID)
		}
		// A voter that does not answer would count against the majority
		// from the moment it is added: with two voters and one silent,
		// the group could commit nothing more. Refuse it instead.
		if err := n.probe(ctx, req.ID, req.Addr); err != nil {
			return &replication.Error{Code: replication.CodeBadRequest,
				Message: fmt.Sprintf("node %d at %s does not answer (%v): start it with PYSTREAM_JOIN=on first", req.ID, req.Addr, err)}
		}
		err = n.raft.AddVoter(ctx, req.ID, req.Addr)
	case replication.MembershipRemove:
		err = n.raft.RemoveVoter(ctx, req.ID)
	default:
		return replication.Errorf(replication.CodeBadRequest, "unknown membership change %q", req.Op)
	}
	if errors.Is(err, raftmeta.ErrNotLeader) {
		return &replication.Error{Code: replication.CodeNotLeader, Message: err.Error()}
	}
	if err == nil {
		n.log.Info("metadata group membership changed", "op", req.Op, "node", req.ID, "addr", req.Addr)
	}
	return err
}

// probeTimeout bounds the check that a node to be added answers.
const probeTimeout = 2 * time.Second

// probe checks that node id answers Raft's connections at addr: with
// TLS, that the node there presents id's certificate.
func (n *Node) probe(ctx context.Context, id int, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	kind := netmux.KindRaft
	if n.cfg.Dial != nil && n.cfg.TLS == nil {
		kind = 0 // an in-memory network: no Mux may be there to read it
	}
	conn, err := n.dialInternal(ctx, addr, id, kind)
	if err != nil {
		return err
	}
	return conn.Close()
}
