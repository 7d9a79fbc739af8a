// Package verify checks a PyStream data directory without changing it: the
// engine of `pystream log verify`.
//
// It understands every on-disk layout described in
// docs/design.md § Data directory layout, and judges whatever part of one it
// is pointed at:
//
//	data/
//	├── cluster.meta                                    brokers, topics, leaders, active sets
//	├── broker-000001/topics/orders/partition-000000/log.bin
//	├── broker-000002/topics/orders/partition-000000/log.bin
//	├── orders/topic.meta                               a stand-alone topic
//	├── orders/partition-000000/log.bin
//	└── offsets/worker/orders/partition-000000.offset   {"version": 1, "offset": N}
//
// Every log.bin is scanned front to back with log.ScanFile; the first damaged
// frame is reported with its byte position, the offset it should have had and
// whether it is a torn tail that `pystream log repair` can cut.
//
// Each metadata file is judged by the parser of the module that owns its
// format, read-only: topic.ParseMetadata, client.ParseOffsetFile and
// cluster.ParseClusterMeta, the very functions topic.Open, the OffsetStore
// and cluster.Open read with. The verifier has no rules of its own about
// what such a file may hold, so it refuses exactly the files the product
// refuses (a test feeds every corpus file to both). Paths and file names
// come from the same modules (topic.PartitionLogPath, topic.MetadataFile,
// client.ParseOffsetFileName, cluster.ReplicaLogPath, ...). What the
// verifier adds are the checks that span files: a topic.meta's name must be
// its directory's, its partitions must all exist and none may lie beyond
// partition_count, and an offset file's name must be one the client writes.
//
// Replicas are checked against their partition's leader as recorded in the
// nearest cluster.meta at or above the verified path. The rule is
// docs/phase-4-replication.md § Catch-up: a follower must be an exact prefix
// of the leader, record by record on offset, timestamp and payload — equal
// offsets alone prove nothing. A follower that is merely short is lagging
// (LAG n), which is normal after a failed replication and not damage. A
// follower that differs, or holds records past the leader's end, has
// diverged. The exception is a follower outside the active set: after a
// failover the old leader keeps records that were never acknowledged, and
// recovery truncates them, so that is reported as INACTIVE and is not a
// problem.
//
// Decisions are pure functions (the modules' parsers, Compare, Judge),
// table-tested without a disk; Verify is the I/O around them. Nothing in
// this package writes a file.
package verify
