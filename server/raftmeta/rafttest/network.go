package rafttest

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// RPCTimeout is how long a transport waits for a reachable peer to take
// one message and answer it (ten times that for a snapshot), hashicorp's
// InmemTransport default. An unreachable peer fails at once.
const RPCTimeout = 500 * time.Millisecond

// Network is an in-memory network of Raft transports, one per node id,
// each at the stable address Addr(id). Every transport is connected to
// every other unless Cut or Isolate says otherwise. The zero value is not
// usable; create one with NewNetwork. It is safe for concurrent use.
type Network struct {
	// mu guards the fields below. Lock order: mu, then a transport's own
	// lock (taken by its Connect and Disconnect).
	mu sync.Mutex
	// up holds the open transport of each node.
	up map[int]*transport
	// links holds the routes set on the transports now.
	links map[route]bool
	// cuts holds the pairs Cut apart; isolated the nodes Isolate cut off.
	cuts     map[pair]bool
	isolated map[int]bool
}

// NewNetwork returns a network with no node on it.
func NewNetwork() *Network {
	return &Network{
		up:       make(map[int]*transport),
		links:    make(map[route]bool),
		cuts:     make(map[pair]bool),
		isolated: make(map[int]bool),
	}
}

// Peers returns the address of each of ids, as a bootstrap configuration
// (raftmeta's Config.Peers).
func (n *Network) Peers(ids ...int) map[int]string {
	out := make(map[int]string, len(ids))
	for _, id := range ids {
		out[id] = Addr(id)
	}
	return out
}

// Transport returns a new transport for node id at Addr(id), connected to
// every node up that Cut and Isolate allow. It is how a node is started
// and restarted: the transport of a closed node is off the network, and a
// restarted node is given a fresh one at the same address. If id still
// has an open transport, that one is taken off the network first, as if
// its process had been cut off for good.
//
// Under testing/synctest, call it inside the bubble the node runs in:
// the transport's channels and timers belong to the bubble they are
// created in.
func (n *Network) Transport(id int) raft.Transport {
	_, inmem := raft.NewInmemTransportWithTimeout(raft.ServerAddress(Addr(id)), RPCTimeout)
	t := &transport{id: id, net: n, inmem: inmem}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.detachLocked(id)
	n.up[id] = t
	n.reconcileLocked()
	return t
}

// Cut breaks the link between a and b both ways, until Heal. It holds for
// transports given to a and b later too.
func (n *Network) Cut(a, b int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cuts[pairOf(a, b)] = true
	n.reconcileLocked()
}

// Isolate cuts id off from every other node, both ways, until Heal. It
// holds for transports given to id later too.
func (n *Network) Isolate(id int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.isolated[id] = true
	n.reconcileLocked()
}

// Heal undoes every Cut and Isolate: every node up reaches every other.
func (n *Network) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cuts)
	clear(n.isolated)
	n.reconcileLocked()
}

// Reachable reports whether a and b reach each other now: both are up,
// and neither Cut nor Isolate separates them.
func (n *Network) Reachable(a, b int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.links[route{a, b}]
}

// closed takes t off the network if it is still its node's transport.
func (n *Network) closed(t *transport) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.up[t.id] == t {
		n.detachLocked(t.id)
		n.reconcileLocked()
	}
}

// detachLocked takes id's transport, if any, off the network: every route
// to and from it is removed, which also closes the pipelines over them.
// Lock should be held.
func (n *Network) detachLocked(id int) {
	t, ok := n.up[id]
	if !ok {
		return
	}
	for r := range n.links {
		if r.to == id && r.from != id {
			n.up[r.from].inmem.Disconnect(raft.ServerAddress(Addr(id)))
		}
		if r.to == id || r.from == id {
			delete(n.links, r)
		}
	}
	t.inmem.DisconnectAll()
	delete(n.up, id)
}

// reconcileLocked sets the transports' routes to what routes decides:
// routes no longer wanted are disconnected (closing their pipelines),
// missing ones connected. Lock should be held.
func (n *Network) reconcileLocked() {
	want := routes(slices.Sorted(maps.Keys(n.up)), n.cuts, n.isolated)
	for r := range n.links {
		if !want[r] {
			n.up[r.from].inmem.Disconnect(raft.ServerAddress(Addr(r.to)))
			delete(n.links, r)
		}
	}
	for r := range want {
		if !n.links[r] {
			n.up[r.from].inmem.Connect(raft.ServerAddress(Addr(r.to)), n.up[r.to].inmem)
			n.links[r] = true
		}
	}
}
