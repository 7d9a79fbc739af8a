// Package rafttest is test support for code built on raftmeta: an
// in-memory network of Raft transports, so that a cluster of nodes runs in
// one test process, under testing/synctest, with partitions made and
// healed on command. It is exported, not internal, because the tests of
// the packages above raftmeta (the cluster node, the server) use it too;
// production code never imports it.
//
// # The network
//
// A Network gives each node id a transport at a stable address, Addr(id)
// ("node-1:7001", "node-2:7001", ...: a host and a port, as the nodes'
// configuration expects of an address), built on hashicorp/raft's InmemTransport: a
// message is handed to the peer's Raft over a channel, with no encoding
// and no sockets. Every transport on the network reaches every other,
// unless the test says otherwise:
//
//	net := rafttest.NewNetwork()
//	peers := net.Peers(1, 2, 3)
//	node, err := raftmeta.Open(raftmeta.Config{
//		ID: 1, Dir: dir1, Peers: peers, FSM: fsm1,
//		Transport: net.Transport(1),
//	})
//
// # Partitions
//
// Cut(a, b) breaks the link between two nodes both ways; Isolate(id)
// breaks every link of one node; Heal undoes them all. A message over a
// broken link fails at once, as a refused connection would, and the
// pipelines of AppendEntries over it are closed. Cuts are kept as state,
// not applied once: a node restarted while cut off comes back cut off.
// Reachable says what the network is now.
//
// # Closing and restarting
//
// Raft closes its transport when it shuts down (raftmeta's Close). The
// closed transport leaves the network: messages to that node fail at once,
// like messages to a process that exited. To restart the node, open it
// again on its Dir with a fresh transport from Transport(id): same
// address, connected again to every node the partitions allow. Transport
// called for a node whose transport is still open takes the old one off
// the network first.
//
// # Under testing/synctest
//
// The transports' channels and timers belong to the bubble they are
// created in, so call NewNetwork and Transport, and open the nodes, inside
// the synctest.Test function. Every timeout of the transport (RPCTimeout
// for a message to a reachable peer that does not answer, ten times that
// for a snapshot) and of Raft (heartbeats, elections, leader lease) then
// runs on the bubble's fake clock. Nothing on the network needs a wall
// clock, and no goroutine of its own outlives the transports: close every
// node before the test function returns, or synctest.Test reports the
// goroutines Raft left behind.
//
// What it does not simulate: latency, reordering, loss of single messages
// and one-way partitions. A message either arrives at once or fails at
// once.
package rafttest
