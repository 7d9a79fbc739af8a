// Package raftmeta runs one hashicorp/raft node over a byte-level state
// machine: the replicated metadata of a PyStream cluster.
//
// # What Raft holds
//
// In cluster mode each pystream-server process is one broker and one Raft
// voter (KRaft's combined mode). Raft replicates the cluster's metadata
// only: which brokers exist, which topics and partitions exist, which
// broker leads each partition and which follow it. The commands and the
// state are opaque bytes here; their meaning is the StateMachine's
// business (the cluster module's metadata code).
//
// Records do not go through Raft. If they did, every record would be
// written twice, once to a majority's Raft logs and once more to its
// partition's log, with an fsync on each; and every write in the cluster,
// to any partition, would queue behind the one Raft leader and its single
// sequential log, so the cluster's throughput would be that of one group
// however many brokers it had. Instead each partition has its own leader,
// spread over the brokers, and its own replication stream between
// processes; Raft only decides who those leaders are. Metadata changes are
// rare and small, which is what one Raft group does well.
//
// # Directory layout
//
// Config.Dir is Raft's own directory, apart from the partition logs:
//
//	raft.db      bolt database (raft-boltdb/v2): the Raft log and the
//	             stable store (current term, last vote)
//	snapshots/   hashicorp's file snapshot store; the newest two are kept,
//	             each a directory holding meta.json and state.bin, the
//	             bytes StateMachine.Snapshot returned
//
// The bolt file is locked while a node has it open; a second Open of the
// same Dir fails after a second instead of waiting.
//
// # Starting
//
// Open on a fresh Dir bootstraps: every node of a new cluster is started
// with the same Peers (id to internal address, ids as the decimal Raft ids
// "1", "2", ...), writes that configuration to its own log, and the first
// election picks a leader. This is hashicorp's documented way, and safe
// because the configurations are identical. A node that joins an existing
// cluster is started with Join instead and waits until the leader adds it
// with AddVoter; it then receives the state from the log, or as a snapshot
// when the leader has compacted its log. Open on a Dir with state recovers:
// the state machine is restored from the newest snapshot and the log
// entries after it are applied again once the commit index is known, and
// Peers is ignored, since the configuration lives in the log.
//
// # Proposing
//
// Apply works on the leader only; a follower answers with a
// *NotLeaderError naming the leader, so a caller can forward the command.
// Apply returns after a majority holds the command and the leader's state
// machine has applied it, with the state machine's result. A state
// machine's refusal is deterministic, so every node refuses alike; it
// comes back as a *RefusedError that unwraps to the state machine's own
// error. ErrLeadershipLost, and a context that ends first, leave the
// outcome unknown: the command may still commit. Barrier lets a new
// leader wait until its state machine has caught up with everything
// committed before it reads from it.
//
// # Timing
//
// The defaults are hashicorp's own heartbeat and election timeouts, and
// half its leader lease. A LAN round trip takes well under a millisecond,
// so shorter timeouts would elect a new leader sooner; they are not
// shorter because PyStream's nodes share their machine's cores with the
// partition logs, the garbage collector and, in tests, each other: on two
// busy cores, half these values made leaders step down and elections
// follow each other with nothing failed.
//
//	HeartbeatTimeout      1 s   a follower that hears no leader for
//	                            between 1 and 2 s stands for election
//	ElectionTimeout       1 s   a split vote is retried after 1 to 2 s
//	LeaderLeaseTimeout  500 ms  a leader cut off from the majority steps
//	                            down after 500 ms (five heartbeats, which
//	                            are sent every HeartbeatTimeout/10)
//	CommitTimeout        50 ms  hashicorp's: followers learn of a commit
//	                            within 50 ms when no new command carries it
//	SnapshotThreshold  8192     a snapshot every 8192 entries, checked
//	SnapshotInterval    2 min   every two minutes (hashicorp's threshold;
//	                            metadata changes slowly)
//	TrailingLogs      10240     entries kept after a snapshot, so a
//	                            follower a little behind catches up from
//	                            the log
//
//	TransportTimeout     10 s   the I/O deadline of one RPC: a peer that
//	                            holds a connection without answering
//	                            holds a replication goroutine this long
//
// With them a new leader is elected one to two seconds after the old one
// stops (under three at worst); the failover test logs the figure. A
// cluster node sets shorter ones from its failover delay
// (clusternode.RaftHeartbeatTimeout, clusternode.CallDeadline), down to a
// quarter of these heartbeat and election timeouts, which its chaos runs
// measure; Raft's pre-vote keeps a follower that times out alone, while
// the other still hears the leader, from deposing it.
//
// The transport also hides two kinds of failed append from Raft's
// growing pause between tries (peerwait.go): a peer that does not answer,
// and one that answers but cannot store the entries; both are tried
// again every PeerRetryEvery while this node leads.
//
// # Membership
//
// AddVoter and RemoveVoter change the configuration one server at a time,
// as hashicorp requires. A removed follower is not told and keeps running
// until it is closed; a leader that removes itself steps down and shuts
// its Raft down.
//
// # Transports
//
// In a server, Raft's messages travel over hashicorp's network transport
// on Config.Listener (the internal port's Raft connections) and
// Config.Dial. Config.Transport replaces both with any raft.Transport; the
// tests use the in-memory network of package rafttest to run a whole
// cluster in one process, under testing/synctest. Either way the log and
// the stable store stay in bolt on Config.Dir, so a node closed and opened
// again on its Dir recovers as a restarted process would.
//
// The node owns its transport: Close shuts Raft down, waits until every
// goroutine of Raft has returned, and closes the transport, then the bolt
// store. For that to hold after a leader removed itself, the node, not
// hashicorp, shuts that Raft down (ShutdownOnRemove is off): hashicorp's
// own shutdown could not be waited for, and would leave the transport
// open.
//
// Either transport is wrapped (peerwait.go) so that, while the node leads,
// an append or heartbeat to a peer that does not answer is tried again
// every PeerRetryEvery inside the call, instead of failing to hashicorp's
// replication loop, which would pause twice as long after each failure, up
// to about 10 s: a node back from a cut is replicated to within
// PeerRetryEvery of answering. Close ends those waits first.
//
// # Under testing/synctest
//
// Raft, its in-memory transport, bolt and this package run inside a
// synctest bubble with no change: every timer (heartbeats, elections, the
// leader lease, RPC timeouts, bolt's lock retries, an Apply's context) is
// on the bubble's fake clock, and once every node is closed no goroutine
// is left. What a test must know:
//
//   - Create the network, the transports and the nodes inside the bubble.
//   - Close every node before the bubble ends (t.Cleanup in the bubble
//     runs in time). A node left open fails the test: synctest.Test
//     panics with "main bubble goroutine has exited but blocked
//     goroutines remain" and lists Raft's goroutines.
//   - Close waits for Raft's messages in flight. On a rafttest network
//     they are answered or fail at once, so no fake time passes; a peer
//     that took a message and never answered would hold Close for the
//     transport's RPC timeout.
//   - The fake clock advances only while every goroutine in the bubble is
//     blocked on something of the bubble; a goroutine in a system call
//     (bolt's fsync) or on a real socket holds it. A network transport
//     over real sockets therefore does not belong in a bubble.
//   - Elections are still random (hashicorp draws its timeouts from
//     math/rand): which node wins, and when within its one-to-two
//     timeouts, changes from run to run. Tests assert the rules, not the
//     winner.
//
// # Left out
//
// Close does not hand leadership over first: for the cluster it is a
// crash, and a new leader is elected after the heartbeat timeout. There
// are no non-voters, no leader-lease reads (use Barrier) and no
// encryption: the internal port belongs to the cluster's own network.
//
// # Logging
//
// Raft's own messages go to Config.Logger with a "component" attribute;
// its Info chatter (elections, snapshots, pipelines) is logged at Debug,
// its warnings and errors as they are — except its lines about a peer it
// cannot reach (a failed heartbeat, append or vote request, "failed to
// contact", and a cut-off node's restarted elections), which a peer that
// is down produces several times a second:
// those are logged at Warn, an expected absence rather than an error, and
// of each kind for each peer only the first, then one per PeerLogEvery
// with the number left out ("suppressed"). The node logs leader changes
// at Info.
//
// # Concurrency
//
// A Node is safe for concurrent use. Raft calls the StateMachine from one
// goroutine, one call at a time.
package raftmeta
