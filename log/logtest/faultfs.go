package logtest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/pystream/pystream/log/durable"
)

// Op names a file-system operation a FaultFS can fail.
type Op string

// The operations a FaultFS sees.
const (
	OpOpen     Op = "open"
	OpWrite    Op = "write"
	OpSync     Op = "sync"
	OpTruncate Op = "truncate"
	OpRename   Op = "rename"
	OpRemove   Op = "remove"
	OpMkdir    Op = "mkdir"
	OpSyncDir  Op = "syncdir"
	OpClose    Op = "close"
)

// ErrInjected is the error a FaultFS returns for an injected failure.
var ErrInjected = errors.New("logtest: injected failure")

// Fault decides the fate of one operation: nil lets it run, ErrShortWrite
// (for OpWrite) writes half the bytes and fails, any other error fails the
// operation without running it.
type Fault func(op Op, path string) error

// ErrShortWrite, returned by a Fault for a write, makes the write put down
// only half of its bytes before failing with an error that wraps both
// io.ErrShortWrite and ErrShortWrite.
var ErrShortWrite = errors.New("logtest: short write")

// FaultFS wraps a durable.FS and consults a Fault before every operation.
// It also counts operations. It is safe for concurrent use.
type FaultFS struct {
	base durable.FS

	// mu guards fault and counts.
	mu     sync.Mutex
	fault  Fault
	counts map[Op]int
}

var _ durable.FS = (*FaultFS)(nil)

// NewFaultFS wraps base (nil means durable.OS) with no faults set.
func NewFaultFS(base durable.FS) *FaultFS {
	if base == nil {
		base = durable.OS
	}
	return &FaultFS{base: base, counts: map[Op]int{}}
}

// SetFault installs f (nil removes every fault).
func (f *FaultFS) SetFault(fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fault
}

// Count reports how many times op was attempted.
func (f *FaultFS) Count(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

// Total reports how many operations of every kind were attempted: the
// number of steps a run took, for tests that then stop a run before each
// step in turn.
func (f *FaultFS) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.counts {
		n += c
	}
	return n
}

func (f *FaultFS) check(op Op, path string) error {
	f.mu.Lock()
	f.counts[op]++
	fault := f.fault
	f.mu.Unlock()
	if fault == nil {
		return nil
	}
	return fault(op, path)
}

func wrap(op Op, path string, err error) error {
	return &fs.PathError{Op: string(op), Path: path, Err: err}
}

// FailNth returns a Fault that fails the n-th (1-based) operation of kind op
// counted from when it is installed, and nothing else.
func FailNth(op Op, n int) Fault {
	var mu sync.Mutex
	seen := 0
	return func(o Op, _ string) error {
		if o != op {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == n {
			return ErrInjected
		}
		return nil
	}
}

// FailFrom returns a Fault that fails every operation of kind op from the
// n-th (1-based) on.
func FailFrom(op Op, n int) Fault {
	var mu sync.Mutex
	seen := 0
	return func(o Op, _ string) error {
		if o != op {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen >= n {
			return ErrInjected
		}
		return nil
	}
}

func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	if err := f.check(OpOpen, name); err != nil {
		return nil, wrap(OpOpen, name, err)
	}
	file, err := f.base.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, f: file}, nil
}

func (f *FaultFS) Rename(oldpath, newpath string) error {
	if err := f.check(OpRename, newpath); err != nil {
		return &fs.PathError{Op: "rename", Path: fmt.Sprintf("%s -> %s", oldpath, newpath), Err: err}
	}
	return f.base.Rename(oldpath, newpath)
}

func (f *FaultFS) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return wrap(OpRemove, name, err)
	}
	return f.base.Remove(name)
}

func (f *FaultFS) Mkdir(name string, perm fs.FileMode) error {
	if err := f.check(OpMkdir, name); err != nil {
		return wrap(OpMkdir, name, err)
	}
	return f.base.Mkdir(name, perm)
}

func (f *FaultFS) SyncDir(dir string) error {
	if err := f.check(OpSyncDir, dir); err != nil {
		return wrap(OpSyncDir, dir, err)
	}
	return f.base.SyncDir(dir)
}

func (f *FaultFS) Stat(name string) (fs.FileInfo, error)      { return f.base.Stat(name) }
func (f *FaultFS) ReadDir(name string) ([]fs.DirEntry, error) { return f.base.ReadDir(name) }

type faultFile struct {
	fs *FaultFS
	f  durable.File
}

func (ff *faultFile) ReadAt(p []byte, off int64) (int, error) { return ff.f.ReadAt(p, off) }
func (ff *faultFile) Stat() (fs.FileInfo, error)              { return ff.f.Stat() }
func (ff *faultFile) Name() string                            { return ff.f.Name() }

func (ff *faultFile) WriteAt(p []byte, off int64) (int, error) {
	switch err := ff.fs.check(OpWrite, ff.f.Name()); {
	case errors.Is(err, ErrShortWrite):
		n, werr := ff.f.WriteAt(p[:len(p)/2], off)
		if werr != nil {
			return n, werr
		}
		return n, wrap(OpWrite, ff.f.Name(), fmt.Errorf("%w (%w)", io.ErrShortWrite, ErrShortWrite))
	case err != nil:
		return 0, wrap(OpWrite, ff.f.Name(), err)
	}
	return ff.f.WriteAt(p, off)
}

func (ff *faultFile) Sync() error {
	if err := ff.fs.check(OpSync, ff.f.Name()); err != nil {
		return wrap(OpSync, ff.f.Name(), err)
	}
	return ff.f.Sync()
}

func (ff *faultFile) Truncate(size int64) error {
	if err := ff.fs.check(OpTruncate, ff.f.Name()); err != nil {
		return wrap(OpTruncate, ff.f.Name(), err)
	}
	return ff.f.Truncate(size)
}

func (ff *faultFile) Close() error {
	if err := ff.fs.check(OpClose, ff.f.Name()); err != nil {
		// The real file is closed all the same, so no descriptor leaks.
		return errors.Join(wrap(OpClose, ff.f.Name(), err), ff.f.Close())
	}
	return ff.f.Close()
}

// DieBefore returns a Fault that fails every operation, of any kind, from
// the n-th (1-based) on: the run behaves like a process killed just before
// step n. Everything it wrote before stays, as a killed process's writes
// stay in the page cache, and nothing after happens.
func DieBefore(n int) Fault {
	var seen atomic.Int64
	return func(Op, string) error {
		if seen.Add(1) >= int64(n) {
			return ErrInjected
		}
		return nil
	}
}

// KillBefore runs life on a new CrashFS rooted at root as a process killed
// just before its n-th file-system step (DieBefore): what life wrote until
// then stays, as a killed process's writes stay in the page cache, and the
// CrashFS still knows which of it was never synced. A second life then runs
// on the returned CrashFS, and Crash shows what a power loss after it keeps.
func KillBefore(root string, n int, life func(fsys durable.FS)) (*CrashFS, error) {
	c, err := NewCrashFS(root)
	if err != nil {
		return nil, err
	}
	dead := NewFaultFS(c)
	dead.SetFault(DieBefore(n))
	life(dead)
	return c, nil
}

// NoSpaceOps are the operations a full file system fails with ENOSPC in
// FullDisk: those that may need a new block or directory entry. Opening a
// file, cutting one back, removing and closing are left to run, as on a
// real full disk, so that readers keep reading and a failed log can still
// cut back its unacknowledged tail.
var NoSpaceOps = []Op{OpWrite, OpSync, OpMkdir, OpRename, OpSyncDir}

// FullDisk returns a Fault that fails every operation of NoSpaceOps on a
// path that match accepts (nil accepts every path) with syscall.ENOSPC, the
// error a full file system returns; durable.NoSpace recognises it through
// the *fs.PathError FaultFS wraps it in. Removing the fault (SetFault(nil))
// is space coming back.
func FullDisk(match func(path string) bool) Fault {
	return func(op Op, path string) error {
		if !slices.Contains(NoSpaceOps, op) || (match != nil && !match(path)) {
			return nil
		}
		return syscall.ENOSPC
	}
}
