// Package clusternode is one broker process of a PyStream cluster of
// processes (docs/phase-7-processes.md): the cluster mode of
// pystream-server, where each process on its own machine is one broker and
// one voter of the metadata group.
//
// It is wiring. The replication core — the leader's write path, the
// follower's side, catch-up, recovery, failover, leader moves, retention —
// is package cluster's, the same code one process runs
// (docs/phase-7-processes.md § One cluster, two transports). A Node opens
// that core for its one broker with cluster.NewMember and gives it the
// three things a process of its own needs:
//
//   - its metadata store (store.go, fsm.go): the metadata group's state
//     machine, cluster.MetaState, on a server/raftmeta voter over
//     hashicorp/raft. Every change is a cluster.MetaCommand committed
//     through Raft — on this node when it leads the group, else proposed
//     to the leader over the internal API — and applied in this node's
//     copy before the call returns. Refusals are MetaState.Apply's, the
//     same as in one process;
//   - its replica transport (transport.go): a request to its own broker is
//     a function call; one to another broker travels over the internal API
//     (server/replication, HTTP/2 on the port it shares with Raft through
//     server/netmux), and its refusals come back as the same typed errors;
//   - its observer (heartbeat.go): every node reports its replicas to the
//     node that leads the metadata group every HeartbeatInterval. That
//     node counts a broker up while its reports arrive within three
//     intervals, and answers every heartbeat with all it knows, so that
//     every node answers what the controller knows. A new leader counts
//     each broker's silence from when it began to lead, in its Raft term.
//
// Beside the core, a Node runs the controller (control.go): the loop of
// one process (server/controller), on the node that leads the metadata
// group, started once that node's copy holds every command committed
// before its term (a Raft barrier) and stopped when it no longer leads. It
// follows the replicated switch of automatic healing (healing.go). It also
// registers its broker's addresses at every start (node.go) and changes
// the group's voters (membership.go).
//
// # Retention
//
// The server calls the Cluster's EnforceRetention every
// PYSTREAM_RETENTION_CHECK_INTERVAL, and a node handles the partitions its
// broker leads, with cluster's own pass (cluster/retention.go): the leader
// commits its intent to the journal through Raft, deletes its oldest
// sealed segments, tells every follower it reaches the new log start (a
// replicate request with LogStartOnly) and commits the outcome, naming its
// intent and every segment removed, per broker. The leader's log start
// travels with every replicate request too: a follower that was down
// takes it at its next write and journals what it deleted then
// (docs/phase-1-log.md § Segments and retention).
//
// # Current metadata
//
// A node that has just started replays its copy of the metadata. Its store
// reports it current (cluster.MetaStore.Ready) once its own registration
// is applied in that copy and, unless it leads the group, the controller
// has answered one of its heartbeats; until then the server answers
// not_ready rather than tell what it does not know yet.
//
// # Deadlines
//
// Every wait on another node is bounded by a deadline derived from the
// failover delay, in config.go (the family of HeartbeatInterval): a call
// to another process (CallDeadline, in transport.go, and a forwarded
// proposal), the internal connections' HTTP/2 pings, Raft's timeouts
// (RaftHeartbeatTimeout), a status's question to a partition's leader
// and a high-watermark probe of a follower (HeartbeatWindow, as
// cluster.MemberConfig.StatusWait: past it the silent broker counts down
// and is not asked) and the node's stop (StopDeadline). A node that
// is paused, or behind a network that holds its bytes, is thereby noticed
// as soon as one whose connections close
// (docs/phase-7-processes.md § Faults and deadlines).
//
// # Concurrency
//
// A Node is safe for concurrent use.
package clusternode
