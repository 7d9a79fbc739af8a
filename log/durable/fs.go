package durable

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FS is the seam through which every PyStream storage layer reaches the disk.
// The real implementation is OS; tests substitute a fault-injecting one (see
// package logtest) to fail a chosen write, sync or rename.
//
// Implementations must be safe for concurrent use.
type FS interface {
	// OpenFile opens or creates a file, as os.OpenFile does.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Rename atomically replaces newpath with oldpath, as os.Rename does.
	Rename(oldpath, newpath string) error
	// Remove deletes a file or an empty directory.
	Remove(name string) error
	// Mkdir creates one directory.
	Mkdir(name string, perm fs.FileMode) error
	// SyncDir makes the entries of a directory (creations, renames,
	// removals) durable.
	SyncDir(dir string) error
	// Stat describes a file or directory.
	Stat(name string) (fs.FileInfo, error)
	// ReadDir lists a directory sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
}

// File is an open file as PyStream uses it: positional reads and writes, a
// data sync, truncation.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync makes the file's data durable. The OS implementation uses
	// fdatasync where the platform has it.
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Stat describes the open file.
	Stat() (fs.FileInfo, error)
	// Name is the path the file was opened with.
	Name() string
}

// WholeSyncer is a file system that can make every write made to it so
// far durable in one call, whichever file it went to: syncfs(2) on Linux.
// A SyncGroup uses it to pay one sync for the appends of many logs.
// Implementations that cannot (another platform, a wrapper over a file
// system that cannot) return an error wrapping errors.ErrUnsupported.
type WholeSyncer interface {
	// CanSyncFS is nil when SyncFS on the file system that holds f is
	// known to make every file on it durable and to report their
	// write-back errors; else an error wrapping errors.ErrUnsupported
	// says why not. A SyncGroup asks once, when it opens.
	CanSyncFS(f File) error
	// SyncFS makes durable every write made so far to the file system
	// that holds f (an open file or directory of this FS), and reports a
	// write-back error of any of its files not yet reported through f.
	SyncFS(f File) error
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Rename(oldpath, newpath string) error       { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                   { return os.Remove(name) }
func (osFS) Mkdir(name string, perm fs.FileMode) error  { return os.Mkdir(name, perm) }
func (osFS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

func (osFS) CanSyncFS(f File) error {
	o, err := osFileOf(f)
	if err != nil {
		return err
	}
	return canSyncfs(o)
}

func (osFS) SyncFS(f File) error {
	o, err := osFileOf(f)
	if err != nil {
		return err
	}
	return syncfs(o)
}

// osFileOf is the *os.File under a file of durable.OS; another file is an
// error wrapping errors.ErrUnsupported.
func osFileOf(f File) (*os.File, error) {
	o, ok := f.(osFile)
	if !ok {
		return nil, fmt.Errorf("durable: syncfs %s: not a file of durable.OS: %w", f.Name(), errors.ErrUnsupported)
	}
	return o.f, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: err}
	}
	return nil
}

// osFile wraps *os.File so that Sync can use fdatasync.
type osFile struct{ f *os.File }

func (o osFile) ReadAt(p []byte, off int64) (int, error)  { return o.f.ReadAt(p, off) }
func (o osFile) WriteAt(p []byte, off int64) (int, error) { return o.f.WriteAt(p, off) }
func (o osFile) Close() error                             { return o.f.Close() }
func (o osFile) Truncate(size int64) error                { return o.f.Truncate(size) }
func (o osFile) Stat() (fs.FileInfo, error)               { return o.f.Stat() }
func (o osFile) Name() string                             { return o.f.Name() }
func (o osFile) Sync() error                              { return datasync(o.f) }
