// Package topic is phase 2 of PyStream: named topics made of a fixed number
// of partitions, each partition an independent segmented log
// (package log/segment: phase-1 files rolled by size and age).
//
// # Partitions and partition-local offsets
//
// A topic has a partition count fixed when it is created (1 to
// MaxPartitionCount). Each partition is its own append-only log with its own
// offsets starting at 0, so "partition 0, offset 5" and "partition 1,
// offset 5" are different records. There is no topic-wide offset and no
// topic-wide ordered read.
//
// # The ordering guarantee
//
// Records a partition accepts keep the order it accepted them in, and their
// offsets increase by one with no gaps. Nothing is promised about the order
// of records in different partitions. Because a key always maps to the same
// partition, records sent under one key stay in order relative to each
// other; that is what keys are for.
//
// # Routing
//
// Append(key, payload) picks the partition:
//
//   - a non-nil key (including the empty key []byte{}) goes to
//     PartitionForKey(key, n): the 32-byte SHA-256 digest of the key read as
//     one big-endian unsigned integer, modulo n. It depends on the key's
//     bytes alone, so it is the same in every process and after every
//     restart. Distinct keys may share a partition.
//   - a nil key means "no key": partitions 0, 1, ..., n-1, 0, ... in turn,
//     from an in-memory cursor that starts at 0 every time the topic is
//     opened. Persisting it would cost a metadata write per record and buy
//     nothing.
//
// Both rules live in one type, Router, which the cluster's replicated
// topics use too, so a record routes alike at every layer.
//
// Worked example: SHA-256("user-123") is fcdec6df...b89bedd8; that 256-bit
// number modulo 3 is 2, so with three partitions "user-123" always lands on
// partition 2 (on 4 of 7, on 24 of 64).
//
// Append routes by the key and stores the payload as given: the key is not
// kept. The network paths keep it (with headers and a producer's
// timestamp) inside the payload, in the small encoding of package
// topic/envelope, which lives here because keys are this phase's idea; the
// log beneath stays opaque about payloads.
//
// # On-disk layout
//
//	<root>/<name>/topic.meta
//	<root>/<name>/partition-000000/00000000000000000000.log
//	<root>/<name>/partition-000001/00000000000000000000.log
//	...
//
// topic.meta is one line of JSON, {"version": 1, "name": "events",
// "partition_count": 3}, written with durable.WriteFile (temp file, fsync,
// rename, fsync of the directory). Records never pass through JSON.
//
// Each name of the layout is spelled once, here: MetadataFile, PartitionDir
// (and its inverse ParsePartitionDir) and PartitionLogDir; the segment
// package names the files inside a partition directory. The
// cluster layer and `pystream log verify` build their paths from them.
//
// ParseMetadata is the one parser of topic.meta: bytes in, a Metadata or a
// *MetadataError out, with no file touched. Open uses it, and so does the
// verifier, so the two cannot disagree about which files are damaged.
//
// # Creating, reopening and crashes
//
// Names (ValidateName) and the partition count are checked before any file
// is touched. Creation makes the partition directories and empty logs first
// (every new directory and file followed by an fsync of its parent) and
// writes topic.meta last. A directory without topic.meta is not a topic, so
// a crash at any point leaves either no topic or a complete one, and opening
// again finishes an interrupted creation.
//
// Reopening reads and validates topic.meta before touching any partition:
// bad JSON, a missing, duplicated, unknown or wrongly typed field, an unknown
// version, an unsafe or different stored name, or a partition count that is
// not positive or differs from the one requested return a *MetadataError and
// change nothing. A missing partition directory or log returns
// ErrMissingPartition and is never recreated; a damaged log returns the
// log's *CorruptionError and is never repaired. A leftover topic.meta.tmp is
// removed once the topic has opened.
//
// # Batches
//
// AppendBatch routes a slice of Messages, groups them by partition keeping
// their order, and writes each group with one write and one fsync, the
// partitions in parallel. If some partitions fail, a *BatchError names them:
// their records were not acknowledged, every other record was. BatchError is
// PyStream's one batch error: client.Producer passes it through and the
// replicated cluster.Producer returns it from SendBatch too, so a partial
// batch is handled the same way at every layer, by the partition of each
// result.
//
// # Configuration
//
// A topic's configuration uses Kafka's keys and meanings, its values
// strings as Kafka's are: retention.ms (default seven days, -1 for ever),
// retention.bytes (per partition replica, default -1: no limit),
// segment.bytes (default 128 MiB, 1 KiB to 1 GiB), segment.ms (default
// seven days, from 1), min.insync.replicas (default 1: the fewest active
// replicas a partition takes writes with; the cluster layer enforces it),
// cleanup.policy (delete only: compact does not exist yet),
// max.message.bytes (the largest record batch a producer may send, default
// 1048588; the layers above enforce it) and message.timestamp.type
// (CreateTime, the default, or LogAppendTime). config.go is the one rule:
// ParseConfigOverrides checks the keys a topic sets (its overrides) and
// makes their values canonical, AlterConfigOverrides sets and removes
// overrides as one change, and Config.With lays them over a server's
// defaults to give the effective Config. Every refusal is a *ConfigError
// naming the key, wrapping ErrInvalidConfig. A standalone Topic stores no
// configuration; the cluster keeps each topic's overrides in cluster.meta.
//
// # Concurrency
//
// A Topic is safe for concurrent use; appends to one partition are group
// committed by its log.
//
// # Left out
//
// Changing the partition count, deleting topics, retention (the cluster
// layer runs it), compaction, replication (phase 4) and coordination between processes
// opening the same topic: one process owns a topic directory at a time.
package topic
