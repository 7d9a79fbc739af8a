package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pystream/pystream/log/durable"
)

// LockFileName is the file in the data directory that a running server
// holds an exclusive flock(2) on for its whole life. It contains the
// server's process id. Other tools (the CLI's `log repair`) try the same
// lock to find out whether a server is using the directory.
const LockFileName = ".lock"

// dataLock is the held lock on a data directory. It is not safe for
// concurrent use; the Server owns it.
type dataLock struct {
	f *os.File
}

// lockDataDir creates dir if needed and takes the exclusive, non-blocking
// lock on dir/.lock, then writes this process's id into the file. When
// another process holds the lock, the error is a *DataDirLockedError
// naming the holder's pid (as the file says) and matches ErrDataDirLocked.
//
// dir and any missing parents are created on fsys with durable.MkdirAll,
// which fsyncs the parent of each: the cluster's data goes below dir, and
// it survives a power loss only if every entry on the way to it does. The
// lock file itself needs no fsync: a flock lives in the kernel only.
//
// The kernel drops a flock when the process exits, however it exits, so a
// crashed server never leaves a stale lock behind; the file itself stays.
func lockDataDir(fsys durable.FS, dir string) (*dataLock, error) {
	if _, err := durable.MkdirAll(fsys, dir); err != nil {
		return nil, fmt.Errorf("server: create data directory: %w", err)
	}
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("server: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid := readPID(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &DataDirLockedError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("server: lock %s: %w", path, err)
	}
	// The pid is information for people; the lock is what counts. Write it
	// in place (truncate, write, sync) while holding the lock.
	content := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(content, 0)
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("server: write lock file %s: %w", path, err)
		}
	} else {
		f.Close()
		return nil, fmt.Errorf("server: write lock file %s: %w", path, err)
	}
	return &dataLock{f: f}, nil
}

// readPID reads the pid written in a lock file, or 0.
func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0) // best effort: the pid only decorates a message
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// release drops the lock. The file stays: removing it would let a second
// server lock a fresh file while a third still holds the old one.
func (l *dataLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}
