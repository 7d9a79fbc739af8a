// Package datalock is the lock on a PyStream data directory: the one place
// that knows the lock file's name, how it is taken and what it holds.
//
// # The file
//
// A running server keeps the file FileName (".lock") in its data directory
// (PYSTREAM_DATA_DIR) and holds an exclusive flock(2) on it for its whole
// life. The file holds the server's process id in decimal and a newline;
// the pid is information for people, the flock is what counts. The kernel
// drops a flock when its process exits, however it exits, so a crashed
// server never leaves a stale lock behind. The file itself stays: removing
// it would let a second server lock a fresh file while a third still holds
// the old one.
//
// # Two ways to take it
//
// Acquire is what a server does on start: it creates the data directory if
// needed (durably, with durable.MkdirAll), creates the lock file, takes the
// lock and writes its pid. It holds the lock until Release.
//
// AcquireExisting is what a file tool does (the CLI's `pystream log
// repair`): it takes the lock only when the file is already there, and
// writes nothing. A tool must not leave a lock file in a directory that is
// no data directory, and it keeps the last server's pid in place. While the
// tool holds the lock, no server can start on the data.
//
// Both are non-blocking: when another process holds the lock they fail at
// once with a *LockedError naming the lock file and the holder's pid as the
// file says, which matches ErrLocked with errors.Is. Two opens of the file
// in one process are two locks too, so a process cannot take it twice.
//
// # Platforms
//
// flock(2) is used on unix systems. Elsewhere both ways fail with an error
// matching errors.ErrUnsupported: a tool refuses rather than risk changing
// files a server has open.
//
// # Dependencies
//
// The package imports the standard library and log/durable only; it links
// neither net/http nor Prometheus, so a tool can use it without pulling in
// the server.
package datalock
