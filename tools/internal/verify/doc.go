// Package verify checks a PyStream data directory without changing it: the
// engine of `pystream log verify`.
//
// It understands every on-disk layout described in
// docs/design.md § Data directory layout, and judges whatever part of one it
// is pointed at:
//
//	data/
//	├── cluster.meta                                    brokers, topics, leaders, active sets
//	├── broker-000001/topics/orders/partition-000000/   a replica's log: a directory of segments
//	│   ├── 00000000000000000000.log                    sealed segment, offsets 0..99
//	│   ├── 00000000000000000000.index                  its sidecar
//	│   ├── 00000000000000000100.log                    the last segment, which takes appends
//	│   ├── quarantine-100-102-<ns>.bin                 records a recovery cut, offsets 100..101
//	│   ├── leader-epochs                               who wrote its records: the leader runs
//	│   └── leader-epochs.damaged-<ns>                  a history the server could not read, set aside
//	├── broker-000002/topics/orders/partition-000000/   the follower's replica
//	├── broker-000002/wal/                              the broker's commit journal (log/wal)
//	│   ├── 00000000000000000002.wal                    a generation: writes replayed at open
//	│   └── 00000000000000000001.wal.aside-<ns>         a generation replay set aside
//	├── orders/topic.meta                               a stand-alone topic
//	├── orders/partition-000000/                        its partition's log directory
//	└── offsets/worker/orders/partition-000000.offset   {"version": 1, "offset": N}
//
// A log directory is verified as one log: its segment files are scanned in
// order with segment.ScanDir, each starting where the previous one ended
// (the base offset in its name). The first damage is reported on the
// directory, naming the segment file, the byte position in it, the offset
// the record should have had and whether it is a torn tail that `pystream
// log repair` can cut; only the last segment can have one, the same bytes
// in a sealed segment are damage, and so is a gap between segments. A
// directory still holding phase 1's log.bin (written before segments) is
// verified as that one file and said to be not yet upgraded; a log.bin
// beside segment files is damage, as the segment package refuses to open
// it. Each sealed segment's sidecar is judged by the segment package's own
// check (segment.CheckSidecar); a bad sidecar is a note, not damage, since
// opening the log rebuilds it. The log start is the first segment's base,
// or the start persisted in log.start (segment.ReadLogStart) when that is
// higher; records below it are scanned for damage but not counted. A quarantine file is scanned with
// offsets from the first offset its name gives and must hold as many
// records as its name says; a single log file named on its own is scanned
// with offsets from its name (a segment's base) or from 0 (a log.bin).
//
// Each metadata file is judged by the parser of the module that owns its
// format, read-only: topic.ParseMetadata, client.ParseOffsetFile,
// cluster.ParseClusterMeta and cluster.ParseEpochsFile, the very functions
// topic.Open, the OffsetStore, cluster.Open and a broker opening a replica
// read with (a leader-epochs is read as the broker reads it, at most
// cluster.MaxEpochsFileSize bytes of a regular file). A leader-epochs the
// broker would refuse is damage: it sets it aside as
// leader-epochs.damaged-<ns>, and such a set-aside file is kept, not
// damage, whatever it holds. Runs that start at or past the replica's log
// end are not damage either, since opening drops them; they are counted in
// the item's detail. The verifier has no rules of its own about
// what such a file may hold, so it refuses exactly the files the product
// refuses (a test feeds every corpus file to both). Paths and file names
// come from the same modules (topic.PartitionLogDir, topic.MetadataFile,
// client.ParseOffsetFileName, cluster.ReplicaDir, segment.ParseSegmentFileName,
// cluster.ParseQuarantineName, ...). What the
// verifier adds are the checks that span files: a topic.meta's name must be
// its directory's, its partitions must all exist and none may lie beyond
// partition_count, and an offset file's name must be one the client writes.
//
// A broker's commit journal (log/wal;
// docs/design.md § The commit journal) holds, after a crash, writes to its
// replicas' segment files that the broker replays into them when it opens,
// before it reads them.
// Each generation file is read with wal.ScanGeneration, the one reader of
// the format replay uses, and judged as replay would use it (the rules of
// its replayGeneration): an unfinished generation holds nothing and is
// removed; a write to a path cluster.JournaledFile refuses stops the
// generation, a write to a file that does not exist is skipped, and bytes
// that are not an entry end it, and each of those keeps the file aside.
// None of that is damage, since the broker replays what it can and keeps
// the rest: the item is OK and says in words what replay will do. A file
// replay set aside (wal.AsideSuffix) is OK too, kept, never replayed
// again. A log the journal holds writes for is verified as the replay
// will leave it: its directory is rebuilt in a temporary directory outside
// the data directory (the files written to copied, with the writes made
// to the copies in replay's order; every other file linked to), and that
// is scanned and compared in its place, with a note in the item's detail.
// So a tail that is only in the journal is neither a torn tail nor a
// lagging or diverged replica.
//
// Replicas are checked against their partition's leader as recorded in the
// nearest cluster.meta at or above the verified path. The rule is
// docs/phase-4-replication.md § Catch-up: a follower must be an exact prefix
// of the leader, record by record on offset, timestamp and payload — equal
// offsets alone prove nothing. Retention deletes a leader's oldest segments
// and a follower may be reset to its leader's log start, so the two are
// compared over the offsets both hold (from the later of their log starts);
// a replica's end is the offset after its last record. A follower that is merely short is lagging
// (LAG n), which is normal after a failed replication and not damage. A
// follower that differs, or holds records past the leader's end, has
// diverged. The exception is a follower outside the active set: after a
// failover the old leader keeps records that were never acknowledged, and
// recovery truncates them, so that is reported as INACTIVE and is not a
// problem.
//
// Decisions are pure functions (the modules' parsers, Compare, Judge),
// table-tested without a disk; Verify is the I/O around them. Nothing in
// this package writes a file in the data directory; the only files it
// writes are the temporary copies of logs a commit journal holds writes
// for, removed before Verify returns.
package verify
