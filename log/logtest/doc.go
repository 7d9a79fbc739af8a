// Package logtest is test support for code built on PyStream's storage
// layers. Every file access of log, topic, client and cluster goes through a
// durable.FS (docs/design.md § File-system seam); the file systems here sit
// behind that seam, so a test can make the disk misbehave in exactly the way
// it needs, without root privileges or a real power cut. It is exported, not
// internal, because the tests of every module above log use it.
//
// # Failures on command
//
// FaultFS wraps any durable.FS and asks a Fault before each operation. A
// Fault can let it run, fail it with ErrInjected, or (for a write) put down
// half the bytes and fail with ErrShortWrite. FailNth fails one operation of
// a kind, FailFrom every one from the n-th on, and DieBefore every operation
// of any kind from the n-th on, as if the process had been killed just before
// that step. FaultFS also counts operations, so a test can prove that an
// fsync happened.
//
// # Crashes
//
// CrashFS simulates a power loss. It remembers, for each file, its content at
// its last Sync and, for each directory, its entries at its last SyncDir;
// its SyncFS (durable.WholeSyncer) makes everything durable at once, so a
// durable.SyncGroup runs over it as over syncfs(2). Crash writes that image into an empty directory, where a test reopens it as
// a restarted process would. KillBefore combines both: a first life killed
// before its n-th step, whose unsynced writes stay in the page cache, then a
// second life on the same files, and then the power cut.
//
// # Measuring and comparing
//
// NoSyncFS skips every fsync, to measure what fsync costs and to open crashed
// copies that are only read. Tree and Snapshot list and read a directory, so
// a test can show that a refused operation left the disk byte for byte as it
// was. BareCommitter is the baseline the benchmarks compare against: the
// least work that makes records durable with group commit.
package logtest
