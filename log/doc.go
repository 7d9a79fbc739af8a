// Package log is phase 1 of PyStream: a durable, append-only log of records
// kept in a single file.
//
// # Records and offsets
//
// A record is an opaque payload plus the two numbers the log assigns when it
// is appended: its offset (0, 1, 2, ... with no gaps) and a wall-clock
// timestamp in nanoseconds since the Unix epoch. The log never looks inside a
// payload; empty payloads are allowed, and payloads above a configurable
// maximum (Options.MaxPayloadSize, 1 MiB by default) are refused with
// ErrPayloadTooLarge before anything is written.
//
// # The file
//
// The file is nothing but frames, one after another, each a fixed 24-byte
// big-endian header followed by the payload:
//
//	record_length  uint32  bytes after this field: 20 + payload_length
//	offset         uint64  assigned by the log
//	timestamp      int64   nanoseconds since the epoch
//	payload_length uint32
//	payload        payload_length bytes
//
// AppendFrame and DecodeFrame (record.go) are the whole format. The two
// length fields are redundant on purpose: together with the offset sequence
// they are how damage is recognised, since there are no checksums.
//
// # What "acknowledged" means
//
// Append returns only after the record's frame has been written with one
// positional write and made durable with fsync (fdatasync on Linux); a new
// file is also followed by an fsync of its directory. Open fsyncs an
// existing file and its directory before serving it, since the process that
// wrote it may have died before doing so. A record that Append returned
// survives a crash of the process or the machine. A record whose
// Append did not return may or may not be there after a crash; either way
// the offsets stay dense.
//
// # Group commit
//
// Concurrent appends share one write and one fsync (commit.go). The first
// appender that finds the log idle becomes the writer: it takes every append
// waiting at that moment as one batch, writes and fsyncs it, publishes the
// records to readers, wakes the batch's callers and hands the writer role to
// the oldest append that queued meanwhile. Nothing waits for a timer, so a
// lone appender pays exactly one write and one fsync, and under load a batch
// is whatever arrived during the previous fsync. AppendBatch and
// AppendRecords put many records into one request. Each caller still
// returns only after its own records are durable, with the offsets it was
// given.
//
// # Reads
//
// Read looks up byte positions in the in-memory index under a short lock and
// reads with one positional read, never waiting for an append. Only durable
// records are in the index, so a reader never sees a record that a crash
// could take back. Returned records are copies the caller may keep and
// modify.
//
// # Recovery
//
// Nothing but the file is persisted. Open scans it front to back, rebuilds
// the index of frame positions (8 bytes per record) and derives the next
// offset. A file that is not a contiguous run of whole, consistent frames
// starting at offset 0 is reported as a *CorruptionError naming the path,
// the byte position, the offset and the reason, and is left exactly as it
// was.
//
// One kind of damage is expected after a crash: a torn tail, the unfinished
// frame of an append that never returned. It is fewer bytes than a header,
// a rest of the file that is all zeros, or a last frame whose length fields
// agree but which runs past the end of the file. CorruptionError.TornTail
// marks it and Pos says where the last whole record ends. Open still
// refuses such a file; Repair keeps a copy of it (log.bin.broken-<unix-ns>),
// cuts the torn tail off, fsyncs, and refuses every other kind of damage
// with ErrNotTornTail.
//
// # Failure
//
// After a write, fsync or truncate fails, the log refuses every later write
// (ErrFailed) until it is reopened. Retrying an fsync that failed and then
// acknowledging would claim durability nobody can promise: the kernel may
// already have dropped the pages it could not write. Every caller of a
// failed batch gets the error; the log cuts the file back to the last
// acknowledged byte when it can, so a reopen finds exactly the acknowledged
// records.
//
// # Replicas
//
// AppendRecord and AppendRecords store records whose offsets and timestamps
// another log assigned, as a follower does with its leader's records; the
// offset must be the next one (ErrOffsetMismatch otherwise, and nothing is
// written). Truncate durably drops every record from an offset on. The
// cluster phases build on both.
//
// # Base offset
//
// A log file normally starts at offset 0. Options.BaseOffset opens one whose
// first frame has another offset: the segments of package log/segment are
// log files that each start where the previous one ended. Such a log
// counts from its base (NextOffset is the base plus the number of records),
// and a Read or Truncate below the base is an error wrapping
// ErrInvalidArgument. Nothing in the file records the base; the caller
// knows it (a segment's file name holds it).
//
// # The file-system seam
//
// Every disk access goes through durable.FS (package log/durable), which
// also holds the atomic-file helpers the upper layers use for metadata.
// Package log/logtest wraps it to inject write, fsync, rename and truncate
// failures and short writes in tests.
//
// # Left out on purpose
//
// One file: no segments, no retention or compaction (package log/segment
// builds segments and retention out of these files; see
// docs/phase-1-log.md § Segments and retention), no checksums (damage is
// found through the redundant length fields and the offset sequence), no
// compression, no file lock against a second process opening the same log.
//
// A *Log is safe for concurrent use by multiple goroutines. ScanFile, Repair,
// AppendFrame and DecodeFrame are plain functions; Repair must not run while
// the log is open.
package log
