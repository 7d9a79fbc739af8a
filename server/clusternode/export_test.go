package clusternode

import (
	"context"
	"net"
	"time"

	"github.com/pystream/pystream/cluster"
)

// ControllerFailoverAfter is the failover delay node n's controller acts
// after now — zero while it changes no metadata — as followHealing
// (healing.go) last set it from the replicated switch. For the tests of
// package clusternode_test, which run nodes on clustertest.
func ControllerFailoverAfter(n *Node) time.Duration { return n.ctrl.FailoverAfter() }

// RaftTerm is node n's current Raft term, for the tests that check a
// stranger moved no term.
func RaftTerm(n *Node) uint64 { return n.raft.Term() }

// DialInternal is node n's dialer of the internal port (security.go,
// dialInternal): with TLS, a handshake that wants node want, then the
// kind byte.
func DialInternal(n *Node, ctx context.Context, addr string, want int, kind byte) (net.Conn, error) {
	return n.dialInternal(ctx, addr, want, kind)
}

// AcceptPeer is node n's check of a peer's node id on its internal port
// (security.go, acceptPeer): nil when it lets the peer in.
func AcceptPeer(n *Node, peer int) error { return n.acceptPeer(peer) }

// AllocateProducerIDs is node n's MetaStore reservation of count producer
// ids (store.go), for the tests that propose one the state refuses.
func AllocateProducerIDs(n *Node, ctx context.Context, count int64) (int64, error) {
	return raftStore{n}.AllocateProducerIDs(ctx, count)
}

// SaveTransaction is node n's MetaStore save of a transactional id's
// state (store.go), for the tests of its compare-and-set through Raft.
func SaveTransaction(n *Node, ctx context.Context, expect cluster.TxnStamp, t cluster.Transaction) error {
	return raftStore{n}.SaveTransaction(ctx, expect, t)
}

// Transaction is a transactional id's state in node n's copy.
func Transaction(n *Node, id string) (cluster.Transaction, bool, error) {
	return raftStore{n}.Transaction(id)
}
