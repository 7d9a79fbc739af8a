// Package log is phase 1 of PyStream: a durable, append-only log of records
// kept in a single file.
//
// # Records and offsets
//
// A record is an opaque payload plus the two numbers the log assigns when it
// is appended: its offset (0, 1, 2, ... with no gaps) and a wall-clock
// timestamp in nanoseconds since the Unix epoch. The log never looks inside a
// payload; empty payloads are allowed.
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
// AppendFrame and DecodeFrame (record.go) are the whole format.
//
// # What "acknowledged" means
//
// Append returns only after the record's frame has been written with one
// write and made durable with fsync (fdatasync on Linux); a new file is also
// followed by an fsync of its directory. A record that Append returned
// survives a crash of the process or the machine. Concurrent appends share
// one write and one fsync (group commit) without weakening that promise:
// each caller still waits for its own record to be durable.
//
// # Recovery
//
// Nothing but the file is persisted. Open scans it front to back, rebuilds
// the in-memory index of frame positions and derives the next offset. A file
// that is not a contiguous run of whole, consistent frames starting at
// offset 0 is reported as a *CorruptionError naming the path, the byte
// position, the offset and the reason, and is left exactly as it was.
//
// One kind of damage is expected after a crash: a torn tail, the unfinished
// frame of an append that never returned. CorruptionError.TornTail marks it
// and Pos says where the last whole record ends. Open still refuses such a
// file; Repair cuts the torn tail off after keeping a copy of the file, and
// refuses every other kind of damage.
//
// # Failure
//
// After a write, fsync or truncate fails, the log refuses every later write
// (ErrFailed) until it is reopened. Retrying an fsync that failed and then
// acknowledging would claim durability nobody can promise.
//
// # Replicas
//
// AppendRecord stores a record whose offset and timestamp another log
// assigned, as a follower does with its leader's records, and Truncate
// durably drops a tail of records; the cluster phases build on both.
//
// # Left out on purpose
//
// One file, no segments, no retention or compaction, no checksums (damage is
// found through the redundant length fields and the offset sequence), no
// compression.
//
// A *Log is safe for concurrent use by multiple goroutines.
package log
