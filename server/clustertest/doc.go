// Package clustertest runs PyStream's cluster mode in one test process:
// several server/clusternode Nodes, each with its own data directory, over
// in-memory transports — Raft over server/raftmeta/rafttest's network, the
// internal API (server/replication, HTTP/2) over in-memory pipes (Network)
// — so that a test of three nodes runs under testing/synctest on a fake
// clock, deterministically, with no sockets and no wall-clock sleeps.
// Links are cut and healed on command, nodes stopped (to the others, a
// crash) and restarted on their data directories.
//
// It is exported, not internal, because the tests of the packages above
// clusternode (the server's behaviour suite) use it too; production code
// never imports it. What only real processes show — SIGKILL, SIGSTOP,
// sockets — stays in server/cmd/pystream-server's tests.
//
// Everything of a Cluster must be created inside the bubble it runs in
// (synctest.Test), and closed before the bubble's function returns: Start
// registers the Cluster's Close with the test.
package clustertest
