// Package durable holds the file-system seam and the durable-file helpers
// that every PyStream storage layer shares.
//
// PyStream acknowledges nothing that is not on stable storage. For a file
// that is replaced as a whole (topic.meta, cluster.meta, a consumer's offset)
// that takes four steps, which WriteFile performs in order:
//
//  1. write the new content to a temp file beside the target,
//  2. fsync the temp file,
//  3. rename it over the target (atomic on POSIX file systems),
//  4. fsync the directory, so the rename itself survives a crash.
//
// A reader therefore sees the old content or the new, never a torn mix.
//
// All disk access goes through the FS interface. OS is the real file system;
// tests wrap it to inject failures at any step (package logtest).
//
// A log makes its appends durable with an fsync of its own file. A
// SyncGroup lets the logs of a server share instead one sync of the whole
// file system (syncfs(2) on Linux, where WholeSyncer says it vouches for
// every file), so that writes spread over many partitions cost about what
// writes to a few do.
package durable
