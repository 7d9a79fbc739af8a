//go:build linux

package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// datasync flushes the file's data and the metadata needed to read it back
// (its size), skipping timestamps: fdatasync(2).
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
		return nil
	}
}

// syncfs makes durable every write made so far to the file system that
// holds f: syncfs(2). Since Linux 5.8 it reports the write-back errors of
// the whole file system not yet reported through f. canSyncfs says
// whether to trust it.
func syncfs(f *os.File) error {
	for {
		err := unix.Syncfs(int(f.Fd()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "syncfs", Path: f.Name(), Err: err}
		}
		return nil
	}
}

// deviceOf is the device of the file system that holds a file.
func deviceOf(info fs.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true //nolint:unconvert // Dev is uint64 on some architectures only
}

// syncfsKernel reports whether the running kernel's syncfs(2) reports
// write-back errors (Linux 5.8 and later); before, it returned 0 even
// after one, so a shared sync could not vouch for anything.
var syncfsKernel = sync.OnceValue(func() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 5 || major == 5 && minor >= 8
})

// canSyncfs is nil when syncfs(2) on the file system that holds f is
// known to vouch for its files (syncfsKernel, wholeSyncable); else an
// error wrapping errors.ErrUnsupported: a SyncGroup then syncs file by file.
func canSyncfs(f *os.File) error {
	switch {
	case !syncfsKernel():
		return fmt.Errorf("durable: syncfs %s: the kernel is older than Linux 5.8, whose syncfs reports write-back errors: %w", f.Name(), errors.ErrUnsupported)
	case !wholeSyncable(f):
		return fmt.Errorf("durable: syncfs %s: not on ext4, XFS or Btrfs: %w", f.Name(), errors.ErrUnsupported)
	}
	return nil
}

// wholeSyncable reports whether a sync of the file system that holds f is
// known to make its files durable and to report their write-back errors:
// the disk file systems whose syncfs does (ext4 — whose magic number
// ext2 and ext3 share, served by the same driver — XFS, Btrfs). Another —
// a network or FUSE file system, an overlay, tmpfs — is synced file by
// file.
func wholeSyncable(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return false
	}
	switch uint32(st.Type) { //nolint:unconvert // an int32 on 32-bit platforms
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return true
	}
	return false
}
