// Package wal is a broker's commit journal: one file that the appends of
// many logs go through, so that one fsync makes a batch durable across
// partitions.
//
// Phase 1's log makes each batch durable with an fsync of its own file.
// Spread writes over a thousand partitions and a broker pays a thousand
// fsyncs where three partitions cost three, and on ext4 each of them also
// commits the file system's journal and waits for every other file's
// pending data. FS puts a write-ahead journal in front of the files it is
// told to (Options.Journaled): a journaled file's WriteAt writes the file
// as before and stages the write; its Sync appends the staged writes to
// the current generation file of the journal, and one fsync of that file,
// shared by every Sync in flight on any journaled file, makes them all
// durable.
//
// The journal is a series of generation files. Each is made ahead, in the
// background once the current one is half used, and filled with zeros to
// Options.GenerationBytes after its header, so that a round overwrites
// bytes the file already holds and its fdatasync has no size to commit;
// the journal moves on to it when a round no longer fits. A journal that
// takes little never makes one: its first file grows as it is written.
//
// The journaled files themselves are fsync-ed later, at a checkpoint: a
// new generation file starts, every file written through the older ones
// is fsync-ed, and the older ones are removed. A checkpoint runs every
// Options.CheckpointBytes of entries, and before any
// operation a replay would undo: Truncate of a journaled file below the
// end of the writes the journal holds to it, Remove or Rename of a path at
// or above one it holds writes to, or OpenFile with O_TRUNC of one. Open replays every generation, oldest
// first, into the files it names, fsyncs them and removes the journal, so
// that nothing reads a file before its acknowledged writes are back.
//
// A generation file begins with a 16-byte header (magic "PSWJ", version
// 1, its number); each entry is one write: its length, CRC-32C, kind,
// path relative to the root, byte position and data (entry.go). Replay
// stops at the zeros ahead of the last entry. A file with bytes that are
// not an entry (a write a crash cut short, or damage), or with writes to
// a file that no longer exists, is kept beside the journal
// (AsideSuffix), never replayed again and never deleted.
//
// A failed write to the journal fails the Syncs of its round and is cut
// back; a failed fsync of it, or of a file a checkpoint syncs, breaks the journal
// for good: every later journaled Sync fails until the journal is opened
// again, whose replay restores what it holds. Nothing of a broken journal
// is removed. Close fsyncs every file written through the journal and
// removes it, so that the next Open replays nothing.
//
// The design and its costs are in docs/design.md § The commit journal.
package wal
