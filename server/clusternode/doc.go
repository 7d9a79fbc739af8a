// Package clusternode is one broker process of a PyStream cluster of
// processes (docs/phase-7-processes.md): the cluster mode of
// pystream-server, where each process on its own machine is one broker and
// one voter of the metadata group.
//
// A Node joins four pieces:
//
//   - its broker: a cluster.Broker over its data directory, holding its
//     replicas as phase-1 logs, exactly as a logical broker does;
//   - its voter of the metadata group (server/raftmeta over
//     hashicorp/raft), whose state machine is cluster.MetaState: topics,
//     placement, leaders, leader epochs, active sets, brokers' addresses,
//     consumer offsets and the journal. Every change is a
//     cluster.MetaCommand applied by cluster's own pure code;
//   - its internal API (server/replication over server/netmux, one port
//     shared with Raft): the leader's writes to its followers, a
//     follower's reads of its leader, heartbeats, forwarded proposals and
//     produce requests;
//   - while it leads the metadata group, the controller
//     (server/controller, the same loop as in one process) over a view of
//     the metadata fed by the brokers' heartbeats. Its failovers,
//     deactivations and re-activations are commands committed through Raft.
//
// # Writes
//
// A partition's leader appends a batch durably, sends it to every active
// follower with its leader epoch, and acknowledges it when each has
// fsync-ed it: phase 4's contract across processes. A follower takes
// records only from the leader and at the epoch its metadata holds, so a
// replaced leader is fenced. At the first write of a new epoch a follower
// proves its log a prefix of the new leader's and cuts what differs into a
// quarantine file (cluster.Broker.CutReplica). A leader stops waiting for
// a follower only once the follower's removal from the active set is
// committed and applied on the leader.
//
// # Any node answers
//
// Node implements the server's Backend: a produce or a fetch that reaches
// a node which does not lead the partition is forwarded to the leader over
// the internal API; metadata changes are proposed to the metadata group's
// leader wherever it is, and answered once this node has applied them.
//
// # Concurrency
//
// A Node is safe for concurrent use. Each replica has two locks: one for
// the leader's queue of writes (group commit) and one serialising what
// changes its log as a follower.
package clusternode
