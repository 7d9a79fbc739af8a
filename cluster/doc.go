// Package cluster is phases 4 and 5 of PyStream: brokers, synchronous
// leader/follower replication, failover and replica recovery — and the
// controller's rules (Plan) that call them, and the journal that records
// them. The same code is the replication core of cluster mode, one broker
// per process (docs/phase-7-processes.md).
//
// # Brokers
//
// A broker is a logical storage node inside one process. What makes it a
// node is isolation: broker 1 owns <root>/broker-000001/ and nothing else,
// and each replica it holds is a segmented log (package log/segment): a
// directory of ordinary phase-1 log files, rolled by its topic's
// segment.bytes and segment.ms:
//
//	<root>/
//	├── cluster.meta
//	├── hw.checkpoint                    high watermarks at the last clean Close
//	├── producer.ids                     the next producer id no block has reserved
//	├── transactions.state               every transactional id's state (transactions.go)
//	├── journal/log.bin                  what happened and why (JSON entries)
//	├── offsets/                         consumer offsets (phase 3 format)
//	├── broker-000001/topics/orders/partition-000000/
//	│   ├── 00000000000000000000.log     a sealed segment
//	│   ├── 00000000000000000000.index   its sidecar
//	│   ├── 00000000000000004712.log     the active segment
//	│   ├── log.start                    the log start, when inside a segment
//	│   ├── 00000000000000004790.producers  its producers as of that offset (producersnapshot.go)
//	│   ├── leader-epochs                which leader run wrote which records (epochs.go)
//	│   └── quarantine-<from>-<to>-<ns>.bin  records recovery cut
//	├── broker-000002/topics/orders/partition-000000/...
//	└── broker-000003/topics/orders/partition-000001/...
//
// BrokerDir and ReplicaDir spell these paths (the partition part comes
// from topic.PartitionLogDir, cluster.meta's name is MetaFileName, the
// files inside a replica's directory are package segment's, but for the
// producer snapshots, ProducerSnapshotFileName's, and the leader-epoch
// history, EpochsFileName); nothing else
// rebuilds them. A replica directory written before segments holds one
// log.bin, which its first open renames to the first segment.
//
// A broker is unavailable from Close until a new Broker with its id is
// registered (RegisterBroker, or StartBroker/StopBroker). In one process
// there is no failure detector: closing is how a failure is simulated. In
// cluster mode a broker is a process, stopped and started as one
// (ErrBrokerIsProcess), and its heartbeats say whether it is up (below).
//
// # One cluster, two transports
//
// The replication core — the leader's write path (leader.go), the
// follower's side (follower.go), what a replica serves (records.go),
// catch-up, recovery, failover, leader moves, retention — is written once,
// over three interfaces:
//
//   - MetaStore (store.go) reads the metadata (a MetaState, whose Apply is
//     pure), commits its changes (Intend, then Change), and keeps the
//     journal, the consumers' committed offsets, the healing switch, the
//     blocks of producer ids NewProducerID hands out from, and the
//     transaction coordinator's states (txnstore.go);
//   - Transport (transport.go) carries Replicate, Records, Digests, Cut,
//     Produce, OffsetForTime and Operate to a broker by id, and its typed
//     errors (*NotLeaderError, *StaleEpochError, *EpochAheadError,
//     *BehindError) back;
//   - Observer (observer.go) says which brokers are up and what each
//     replica last reported.
//
// Open builds a Cluster of one process: its store is cluster.meta, the
// journal file and the offset files (filestore.go), its transport a
// function call to another broker of the process (local.go), and it needs
// no Observer: it reads every replica itself. NewMember (process.go)
// builds the Cluster of one process of cluster mode, hosting one broker,
// from a MemberConfig whose Store, Transport and Observer its wiring gives
// it (server/clusternode: Raft, the network, heartbeats). That Cluster
// follows the metadata on its own: it creates its replicas of new topics,
// removes its files of deleted ones and applies changed topic
// configuration. An operation asked of a process that cannot run it is
// sent with Operate to the one that can (operate.go): a failover to the
// controller's process, a catch-up, recovery or leader move to the
// partition leader's. Two things stay with one process: hw.checkpoint,
// and stopping and starting a logical broker.
//
// # Placement and cluster.meta
//
// CreateTopic computes the placement once with Placement: brokers sorted
// by id B[0..n-1], partition p led by B[p mod n] and followed by the next
// rf-1 brokers round the ring. cluster.meta records, per partition, the
// replicas in placement order (the first is the preferred leader), the
// leader, its leader epoch (one more at every leader change) and the active
// replicas, and is written atomically
// (temp file, fsync, rename, directory fsync) before any change is
// reported. Open validates every rule of the format and refuses a malformed
// file with a *MetadataError, leaving it untouched. ParseClusterMeta is that
// one parser (pure: bytes in, Metadata or *MetadataError out), shared with
// `pystream log verify`; it splits every JSON object with
// durable.ObjectFields, so a repeated key is refused as in topic.meta.
//
// # Writes
//
// A Producer routes like a topic and writes through the partition's
// leader: the leader appends durably and assigns offset and timestamp, then
// every active follower stores exactly those records (Transport.Replicate,
// at the leader's epoch), the followers in parallel. The write is
// acknowledged only when every active replica holds it. A follower that
// fails makes the write a *ReplicationError; the leader keeps its record
// (an append-only log is not rolled back) and the follower lags until
// CatchUp — or, with Options.CatchUpOnWrite (always on in cluster mode),
// until the next write, which sends it what it misses first. An
// unavailable leader is a *LeaderUnavailableError; the cluster fails
// nothing over on its own (the server's controller does, by the rules of
// Plan).
//
// Every PyStream producer answers in one shape. SendResult embeds
// client.SendResult (topic, partition, offset, timestamp) and adds what only
// a cluster knows: the leader that took the write and the brokers that hold
// it. SendBatch reports a partial failure exactly as topic.Topic.AppendBatch
// does, with the same *topic.BatchError (the cluster defines none of its
// own), and every result, acknowledged or not, carries its Topic and
// Partition: a record was acknowledged exactly when
// BatchError.Failed(result.Partition) is false, so no caller routes a key a
// second time to find out. The cluster keeps a Producer of its own rather
// than a client.Producer over a Sink because its results say more than a
// Sink's do. MaxPayloadSize is the largest record the brokers the cluster
// starts accept, for a caller that must refuse a record before anything of
// its request is written.
//
// Concurrent sends to one partition are group-committed: whichever sender
// finds the partition idle writes everything already waiting as one leader
// append and one append per follower, then wakes every sender of the batch.
// The default order (leader fsync first, then the followers) keeps a
// follower's log a prefix of its leader's at every instant, even across a
// power loss. Options.ParallelLeaderWrite overlaps the leader's fsync with
// the followers' for lower latency and gives that invariant up (see its
// comment and docs/phase-4-replication.md for the trade-off).
//
// # High watermark
//
// The high watermark is the end of the prefix every active replica holds.
// Acknowledged batches advance it; readers refresh it from the active
// replicas' log ends. When an active replica is unavailable its log end is
// unknown, so the watermark stays where it was rather than trust the
// others: that replica may come back and be the only failover candidate.
// It never moves backwards while the process lives. In one process, Close
// records every watermark in hw.checkpoint (EncodeHWCheckpoint; a damaged file is an
// *HWCheckpointError) and the next Open starts from it and removes it, so a
// cluster reopened without one of its brokers serves what was below the
// watermark at shutdown; after a crash it starts at 0 until every active
// replica can be read. ReadCommitted, TopicSource and NewConsumer serve
// records only below it, so a consumer never sees a record a failover could
// discard, and CommitOffset, ResetOffset and the consumer's Commit refuse
// an offset past it (*client.OffsetBeyondEndError). In cluster mode there
// is no checkpoint: a restarted leader asks its active followers for their
// log ends.
//
// # Catch-up, failover, recovery
//
// CatchUp proves a follower is an exact prefix of its leader (the two
// replicas' leader-epoch histories, epochs.go, and offset, timestamp and
// payload where they cannot tell) and copies the rest;
// divergence is reported, never repaired. Failover promotes the active,
// available follower with the longest log (ties to the lowest id) after
// checking every candidate agrees with it, and records the old leader as an
// inactive follower. RecoverReplica truncates a returning inactive replica
// back to its common prefix with the leader, copies the leader's missing
// records, verifies the two are identical and only then reactivates it.
// What recovery cuts is first copied, durably, to a quarantine file beside
// the log (QuarantinePath); PyStream never deletes it. MoveLeader hands
// leadership to an active, caught-up replica with writes paused, and
// Deactivate takes a follower out of the active set. The pure decisions —
// Placement, CompareRecords, ChooseLeader, Plan and Readiness — are plain
// functions over plain values.
//
// # The controller's rules and the journal
//
// Plan is the controller's decision (docs/design.md § The controller):
// observed state in, actions out. Apply carries one action out through
// the operation of its kind, refusing one planned on an older leader epoch
// (ErrStaleAction). Every operation that changes the cluster, whoever
// asked, is journaled: an intent before cluster.meta changes, then done or
// failed. Open gives an intent a crash left without an outcome its
// outcome — completed or rolled back, as cluster.meta shows — so an
// operation is never half done and the journal says which. Journal reads
// it back.
//
// # Retention
//
// EnforceRetention is one retention pass (the server runs one every
// PYSTREAM_RETENTION_CHECK_INTERVAL). For each partition the leader
// decides, by its topic's retention.ms and retention.bytes
// (segment.PlanRetention), how many of its oldest whole sealed segments
// go — never the active one, never one holding a record at or above the
// high watermark — and deletes them, which raises its log start. Every
// available follower then takes the same log start and deletes its own
// segments wholly below it. The pass journals its intent first, then the
// outcome naming every segment removed per broker (RemovedSegment); Open
// gives an intent a crash interrupted the outcome failed, and the next pass
// deletes what is left. A read below the log start is a
// *client.OffsetOutOfRangeError. Catch-up and recovery compare replicas
// only over the range both hold, from the later of their log starts, and
// reset a follower whose log ends below the leader's start, empty, at that
// start (alignStart). docs/phase-1-log.md § Segments and retention tells the
// whole story.
//
// # Deleting a topic
//
// In one process DeleteTopic stops the topic's writes, journals its intent,
// and writes cluster.meta without the topic: the commit point. Only then are the
// replica directories (every broker's topics/<topic>/) and every
// consumer's offsets of it removed, and the outcome journaled. A crash
// leaves the whole topic or none of it; Open finishes the removal of a
// committed deletion before anything can use the name, and a topic created
// again under it starts empty, with no consumer offsets (docs/design.md
// § Deleting a topic). In cluster mode one command deletes the topic and
// its offsets and journals the intent; each process holding replicas
// removes its own files and says so (OpTopicFilesRemoved), and the last
// journals the outcome and frees the name (MetaState.Deleting).
//
// # Concurrency
//
// Cluster, Broker, Producer and TopicSource are safe for concurrent use.
// Failover, RecoverReplica, CatchUp and DeleteTopic wait for the
// partition's batch in flight, go before any send still queued, and hold new
// writes back while they run.
//
// # Left out on purpose
//
// Consensus, networking and failure detection themselves: the package is
// written over MetaStore, Transport and Observer, and its wiring gives
// them Raft, HTTP/2 and heartbeats. Kafka's ISR (the active set changes
// only by failover and recovery, never for lagging); changing placement or
// partition counts after creation.
package cluster
