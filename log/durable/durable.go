package durable

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// TempSuffix is appended to a file's name while WriteFile prepares its new
// content. A file with this suffix is what an interrupted WriteFile leaves
// behind; it never holds a committed value.
const TempSuffix = ".tmp"

// WriteFile replaces the file at path with data atomically and durably: the
// data goes to path+TempSuffix, which is fsync-ed, renamed over path, and then
// the directory is fsync-ed. After a crash the file holds either its old
// content or data, never a mix.
//
// On failure WriteFile removes its temp file when it can; path is untouched
// unless the rename itself happened (then only the directory sync failed, and
// the new content may or may not survive a crash).
func WriteFile(fsys FS, path string, data []byte) error {
	tmp := path + TempSuffix
	err := WriteSynced(fsys, tmp, data)
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		if rerr := fsys.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("durable: write %s: %w", path, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("durable: write %s: %w", path, err)
	}
	return nil
}

// WriteSynced creates (or truncates) the file at path, writes data and
// fsyncs the file before closing it. It does not sync the directory:
// WriteFile renames the file first, and a caller that keeps the name
// (a segment's sidecar, which a checksum guards against a cut write) syncs
// the directory itself.
func WriteSynced(fsys FS, path string, data []byte) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile reads a whole file through fsys.
func ReadFile(fsys FS, path string) ([]byte, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, info.Size())
	n, err := f.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(buf)) {
		return nil, err
	}
	return buf[:n], nil
}

// ReadSmallFile reads a whole file whose format bounds its size: a
// metadata or offset file. It refuses, before reading a byte, a path that is
// not a regular file (ErrNotRegular) and a file of more than limit bytes (an
// error wrapping ErrTooLarge), so a damaged data directory can make no
// reader block on a pipe or allocate without bound. A missing file gives an
// error wrapping fs.ErrNotExist.
func ReadSmallFile(fsys FS, path string, limit int64) ([]byte, error) {
	info, err := fsys.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%d bytes, more than %d: %w", info.Size(), limit, ErrTooLarge)
	}
	return ReadFile(fsys, path)
}

// RemoveTemp deletes a leftover temp file of an interrupted WriteFile of
// path, if there is one, and fsyncs the directory. The committed file at path
// is never touched.
func RemoveTemp(fsys FS, path string) error {
	tmp := path + TempSuffix
	if err := fsys.Remove(tmp); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("durable: remove %s: %w", tmp, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("durable: remove %s: %w", tmp, err)
	}
	return nil
}

// SyncDir fsyncs a directory so that the entries created, renamed or removed
// in it survive a crash.
func SyncDir(fsys FS, dir string) error {
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("durable: sync dir %s: %w", dir, err)
	}
	return nil
}

// MkdirAll creates dir and any missing parents, fsyncing the parent of every
// directory it creates so that the new entries survive a crash. It reports
// whether it created anything.
//
// When dir already exists, its parent is fsync-ed all the same: an earlier
// process may have died between creating dir and syncing its parent, and
// the caller is about to put files in dir that it will acknowledge. Every
// directory above it is durable already: MkdirAll syncs a parent before it
// creates anything inside the child.
func MkdirAll(fsys FS, dir string) (created bool, err error) {
	dir = filepath.Clean(dir)
	info, err := fsys.Stat(dir)
	if err == nil {
		if !info.IsDir() {
			return false, fmt.Errorf("durable: mkdir %s: %w", dir, &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR})
		}
		if parent := filepath.Dir(dir); parent != dir {
			if err := fsys.SyncDir(parent); err != nil {
				return false, fmt.Errorf("durable: mkdir %s: %w", dir, err)
			}
		}
		return false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("durable: mkdir %s: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if _, err := MkdirAll(fsys, parent); err != nil {
			return false, err
		}
	}
	if err := fsys.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Someone else created it meanwhile. Their directory fsync may
			// not have happened yet; MkdirAll of an existing directory
			// syncs its parent.
			return MkdirAll(fsys, dir)
		}
		return false, fmt.Errorf("durable: mkdir %s: %w", dir, err)
	}
	if err := fsys.SyncDir(parent); err != nil {
		return false, fmt.Errorf("durable: mkdir %s: %w", dir, err)
	}
	return true, nil
}
