// Package clusternode is one broker process of a PyStream cluster of
// processes (docs/phase-7-processes.md): the cluster mode of
// pystream-server, where each process on its own machine is one broker and
// one voter of the metadata group.
//
// A Node joins four pieces:
//
//   - its broker: a cluster.Broker over its data directory, holding its
//     replicas as segmented logs (directories of phase-1 log files),
//     exactly as a logical broker does;
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
//     Whether it makes them at all is in the metadata too: automatic
//     healing switched off or on by the operator (healing.go), which every
//     node's controller follows, while the heartbeats keep FailoverAfter's
//     timing either way.
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
// # Retention
//
// The server calls EnforceRetention every PYSTREAM_RETENTION_CHECK_INTERVAL.
// A node handles only the partitions it leads, and there the leader
// decides alone, with cluster's own pure rule (segment.PlanRetention over
// its topic's retention.ms and retention.bytes from the metadata): whole
// sealed segments, oldest first, never the active one, never one holding a
// record at or above its high watermark; an active segment whose records
// have all expired is rolled first so that it can go too
// (cluster.PlanRetentionOn). It commits an intent to the journal through
// Raft (event retention, by retention) and only then deletes
// (segment.Log.AdvanceStart), which raises its log start; the outcome,
// done or failed, names the segments removed and its intent. A node that
// dies in between leaves the intent without an outcome; every deletion is
// crash-safe on its disk, and the next pass deletes what is left.
//
// The followers learn the new log start from the leader: at once from a
// catch-up probe at the end of the pass, and again from the log_start of
// every replicate request and from the answers to their own reads of the
// leader. A follower applies it in takeLogStartLocked: it deletes its
// segments wholly below the start (persisting log.start when the start
// falls inside one of its segments) and journals them; a follower whose log
// ends below the start — it was stopped while retention ran — is reset,
// empty, at the start (segment.Log.ResetTo), journalled as a catch-up, and
// copies from there. When a follower proves its log a prefix of its
// leader's, it compares only what the leader still holds. A committed read
// below the start is refused as offset out of range wherever it arrives,
// and the node that forwarded it returns the *client.OffsetOutOfRangeError
// the embedded cluster would (docs/phase-1-log.md § Segments and retention).
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
