// Package segment keeps a replica's log as a directory of segment files,
// built from phase 1's log.Log (package log): the segmented log of Kafka,
// small enough to read in an afternoon.
//
// # Layout
//
// A partition replica is a directory:
//
//	00000000000000000000.log     sealed segment, offsets 0..4711
//	00000000000000000000.index   its sidecar
//	00000000000000004712.log     the active segment, from offset 4712
//	log.start                    the log start, when raised inside a segment
//
// A segment file is named after its base offset, the offset of its first
// frame, in 20 digits (SegmentFileName), so that names sort as offsets do.
// Inside, the bytes are exactly phase 1's frames (log.AppendFrame) with
// absolute offsets. Segments are contiguous: each begins where the previous
// one ends. The last segment is the active one, an open log.Log (opened with
// log.Options.BaseOffset), so group commit, fsync before acknowledging and
// failure stickiness are phase 1's. The others are sealed: read-only, each
// held as a file handle, a few numbers and, once it has been read, a
// thinned copy of its sidecar's sparse index (every 4th entry, 8 bytes: 512
// bytes per MiB of segment at the default interval) instead of log.Log's
// 8 bytes per record.
//
// # Rolling
//
// One append call is one batch, and a batch never spans two segments.
// Before a batch is written, the active segment rolls when the batch would
// take it past SegmentBytes (a batch that fills it exactly stays), or when
// its first record is SegmentAge old (now - first timestamp >= age, with
// Options.Log.Now). An empty segment never rolls, so a batch larger than
// SegmentBytes goes alone into an empty segment, which rolls before the
// next write. Appenders hold a read lock while they append and reserve
// their bytes atomically, so concurrent appenders still share the active
// log.Log's write and fsync; a roll takes the write lock, which waits for
// every append in flight. Sealing reads the segment once to build its
// sidecar, writes and fsyncs the sidecar and fsyncs the directory, and only
// then creates the next segment, named after NextOffset (and fsyncs the
// directory again).
//
// # The sidecar
//
// Each sealed segment has a sidecar, base.index, big-endian:
//
//	offset  size  field
//	0       4     magic "PSSX"
//	4       1     version, 1
//	5       3     reserved, zero
//	8       8     base offset
//	16      8     record count
//	24      8     last offset (base + count - 1)
//	32      8     largest timestamp in the segment
//	40      8     segment size in bytes
//	48      4     index interval it was built with
//	52      4     n, the number of index entries
//	56      4     CRC-32C (Castagnoli) of the 56 bytes above
//	60      16*n  entries: relative offset uint32, byte position uint32,
//	              largest timestamp up to and including that record int64
//	60+16n  4     CRC-32C of every byte before it
//
// The header has its own checksum so that Open can trust a sealed
// segment's numbers from one 60-byte read (and the sidecar's length): Open
// reads no index. The index is read, checked against the last checksum and
// thinned when the segment is first read, as Kafka loads a segment's index
// files lazily; a damaged index found then is rebuilt from the segment,
// written again and reported, as Open does for a damaged header. Opening
// 100 sealed 64 MiB segments costs about 200 small reads, not 25 MB of
// index.
//
// The first entry is the first record; after it, an entry is made for the
// first frame that starts at least IndexInterval bytes past the previous
// entry. A read of a sealed segment binary-searches the in-memory thin
// index, reads the window up to the next thin entry (at least 64 KiB) with
// one positional read, and walks to the wanted offset; Read goes on into
// the next window or segment until it has what was asked or reaches
// NextOffset. OffsetForTime reads the sidecar from disk for its
// timestamps.
//
// # Log start
//
// LogStart, the first readable offset, is logical, like Kafka's log start
// offset: the larger of the persisted start (log.start, JSON, written with
// durable.WriteFile only when the start lies above the first segment's
// base) and the first segment's base. AdvanceStart raises it and deletes,
// oldest first, the sealed segments wholly below it, never the active one;
// PlanRetention decides how far, as a pure function. ResetTo empties a
// follower's log at a leader's start. Reads below LogStart fail with
// ErrBeforeLogStart. A log may keep part of its first segment (even the
// whole active segment) physically below the start; those records are
// invisible to Read and OffsetForTime, though ScanDir and Size count them.
//
// # Recovery
//
// Open reads the sidecars' headers and scans only the active segment:
//
//   - a legacy phase-1 log.bin is renamed to 00000000000000000000.log and
//     the directory fsync-ed (a rename is atomic, so a crash leaves one
//     name or the other); log.bin beside segment files is a
//     *log.CorruptionError and nothing is changed;
//   - a leftover log.start.tmp (an interrupted WriteFile) and orphan
//     sidecars (a deletion that removed the segment and died) are removed;
//   - segments wholly below the persisted start (a deletion or ResetTo that
//     died part-way) are deleted; when that leaves none, the log is empty
//     at the start;
//   - a sidecar on the last segment (a roll that died after writing it,
//     before creating the next segment) is dropped: the segment stays
//     active, the roll simply happens again;
//   - a sealed segment's missing or damaged sidecar (bad header checksum,
//     a length that does not fit its entries, disagreeing with the
//     segment's size) is rebuilt by reading the segment, written durably
//     and reported through Rebuilt and Options.Logf (a damaged index behind
//     a whole header: the same, at the segment's first read);
//   - damage in a sealed segment is a *log.CorruptionError naming it, never
//     a torn tail; the active segment is opened by log.Log, so a torn tail
//     there is phase 1's CorruptionError with TornTail set (cut it with
//     log.RepairWithOptions, BaseOffset = the segment's base).
//
// Every creation, rename and removal is followed by a directory fsync, and
// removals go one at a time (oldest first for AdvanceStart, newest first
// for Truncate, the segment file before its sidecar), so a crash at any
// step leaves a contiguous run of segments holding every acknowledged
// record. Unknown files in the directory are left alone.
//
// # Left out on purpose
//
// No compaction, no time index file (OffsetForTime walks from the sparse
// index), no checksums over frames (phase 1's redundant lengths and the
// offset sequence find damage), no preallocation or memory mapping, no
// background retention: the caller runs PlanRetention and AdvanceStart.
//
// A *Log is safe for concurrent use by multiple goroutines; ScanDir,
// PlanRetention and the file-name functions are plain functions.
package segment
