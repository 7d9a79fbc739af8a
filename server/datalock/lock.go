package datalock

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pystream/pystream/log/durable"
)

// FileName is the lock file in a data directory.
const FileName = ".lock"

// Path returns the lock file of the data directory dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Lock is a held lock on a data directory. It is not safe for concurrent
// use; its owner releases it once.
type Lock struct {
	f    *os.File
	path string
}

// Acquire creates dir if needed and takes the exclusive, non-blocking lock
// on its lock file, then writes this process's id into the file: what a
// server does for its life. When another process holds the lock, the error
// is a *LockedError.
//
// dir and any missing parents are created on fsys with durable.MkdirAll,
// which fsyncs the parent of each: the data goes below dir, and it survives
// a power loss only if every entry on the way to it does. The lock file
// itself needs no fsync: a flock lives in the kernel only.
func Acquire(fsys durable.FS, dir string) (*Lock, error) {
	if _, err := durable.MkdirAll(fsys, dir); err != nil {
		return nil, fmt.Errorf("datalock: create data directory: %w", err)
	}
	path := Path(dir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("datalock: open lock file: %w", err)
	}
	l, err := lockFile(f, path)
	if err != nil {
		return nil, err
	}
	if err := writePID(f, os.Getpid()); err != nil {
		f.Close()
		return nil, fmt.Errorf("datalock: write lock file %s: %w", path, err)
	}
	return l, nil
}

// AcquireExisting takes the exclusive, non-blocking lock on dir's lock file
// when the file exists, and writes nothing: what a tool does while it
// changes files a server must not have open. When there is no lock file the
// error matches fs.ErrNotExist; when another process holds the lock it is a
// *LockedError.
func AcquireExisting(dir string) (*Lock, error) {
	path := Path(dir)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datalock: open lock file: %w", err)
	}
	return lockFile(f, path)
}

// lockFile flocks f, the open lock file at path. It closes f when it fails.
func lockFile(f *os.File, path string) (*Lock, error) {
	held, err := tryFlock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("datalock: %w", &os.PathError{Op: "flock", Path: path, Err: err})
	}
	if held {
		pid := readPID(f)
		f.Close()
		return nil, &LockedError{Path: path, PID: pid}
	}
	return &Lock{f: f, path: path}, nil
}

// Path returns the lock file.
func (l *Lock) Path() string { return l.path }

// Release drops the lock; the file stays. Releasing a nil or released Lock
// does nothing.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	if err != nil {
		return fmt.Errorf("datalock: release %s: %w", l.path, err)
	}
	return nil
}
