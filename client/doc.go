// Package client is phase 3 of PyStream: a producer, a consumer bound to one
// partition, and durable committed offsets.
//
// # Producer
//
// A Producer sends raw byte payloads to a Sink (a *topic.Topic, or the
// cluster's replicated topic) and reports where each landed: topic,
// partition, partition-local offset and timestamp. It adds nothing: no
// encoding, and routing, offsets and durability are the topic's. A nil key
// is round robin, any other key (the empty one included) is hashed.
// SendBatch writes a batch with one fsync per partition involved. A
// producer borrows its Sink and never closes it.
//
// # Position vs committed offset
//
// A Consumer reads one explicitly assigned partition of a Source and keeps
// two offsets that mean different things:
//
//	           position                     committed offset
//	lives      in memory                    on disk (OffsetStore)
//	means      next offset Fetch returns    where a restarted consumer starts
//	changes on Fetch, Seek                  Commit only
//
// Fetching offsets 0-4 moves the position to 5 and leaves the committed
// offset unset; Commit then makes it 5. A new consumer starts at its
// committed offset, or at 0 when it never committed; Committed reports ok
// false in that case, which is different from a committed 0.
//
// # At-least-once delivery, and why commits are explicit
//
// The cycle is Fetch, process, Commit. Nothing is committed automatically:
// a consumer that fetched and processed records but stopped before
// committing is restarted at the old committed offset and gets those records
// again. Replay is the intended price of never skipping a record: a record
// is committed only after the application says it is done with it.
// Exactly-once is not offered; make processing idempotent if duplicates
// matter.
//
// # Seek and replay
//
// Seek moves the position only. Seek(0) replays a partition from the start
// without touching durable progress; seeking past the end is allowed and
// yields empty fetches. Committing a position below the stored offset
// returns an *OffsetRegressionError and leaves the file as it was, so
// durable progress is never rewound by accident. Committing a position past
// the end of the partition (Source.NextOffset: a topic's log end, a
// replicated topic's high watermark) returns an *OffsetBeyondEndError and
// writes nothing: no record there was read, and a consumer restarted from
// it would skip every record written up to it. OffsetStore.Commit alone
// knows no partition end; the Consumer checks it.
//
// Seek never rewinds durable progress; Reset is the explicit operator action
// that does. OffsetStore.Reset (what kafka-consumer-groups --reset-offsets
// is for Kafka) writes any offset, below the committed one included, with
// the same name validation, atomic durable write and sticky failure as
// Commit; it too refuses to overwrite a damaged offset file. Consumers
// created after a reset start at the reset offset.
//
// # Log start and offset reset
//
// Retention deletes records from the front of a partition; its first
// readable offset is the log start (Source.LogStart). A Fetch below it
// fails at the Source, and the consumer's ConsumerConfig.OffsetReset
// (Kafka's auto.offset.reset) decides: OffsetResetEarliest, the zero
// value, moves the position to the log start; OffsetResetLatest to the end
// (Source.NextOffset); OffsetResetNone returns the *OffsetOutOfRangeError,
// with the log start and high watermark, and moves nothing. Every reset is
// reported to ConsumerConfig.OnReset and by Consumer.LastReset as an
// OffsetResetEvent (LogStart - From records were deleted unread). A reset
// moves the position only: Commit stays explicit.
//
// # Offset files
//
//	<root>/<consumer_id>/<topic>/partition-000000.offset
//
// hold one line of JSON, {"version": 1, "offset": 123}, the next offset to
// fetch. Commit writes it with durable.WriteFile (temp file, fsync, rename,
// fsync of the directory; new directories are fsync-ed into their parents),
// so a crash leaves the old offset or the new one. Before the first offset
// read from a directory is returned, the directory is fsync-ed (once per
// directory per store): the process that wrote the file may have died
// before syncing it. Consumer ids and topic names follow topic.ValidateName
// and are checked before any path is built.
// A file that is not exactly such a document (bad JSON, a missing,
// duplicated, unknown or wrongly typed field, a negative or oversized offset,
// an unknown version, trailing data) returns an *OffsetCorruptionError with
// its path; it is never repaired or overwritten, not even by a later Commit.
// ParseOffsetFile is that one parser, bytes in and an offset or an
// *OffsetCorruptionError out; `pystream log verify` judges offset files with
// it too. OffsetFileName and its inverse ParseOffsetFileName spell the file
// name (topic.PartitionDir plus OffsetFileSuffix).
// After a failed write, or a failed fsync of a directory read from, the
// store refuses every Commit and Reset of that consumer (ErrStoreFailed)
// until it is reopened; other consumers keep committing, because no
// directory or file of theirs was in the failed write's way
// (docs/design.md § Sticky failure).
//
// # Concurrency
//
// Producer and OffsetStore are safe for concurrent use; the store
// serializes commits and resets to one file and checks regression against
// the file under that lock. A Consumer is used from one goroutine.
//
// # Left out
//
// Consumer groups, group coordination, heartbeats and rebalancing (a
// consumer id is a durable progress identity, not a group id), automatic
// commits, exactly-once delivery, and transactions.
package client
