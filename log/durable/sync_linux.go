//go:build linux

package durable

import (
	"io/fs"
	"os"
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
// the whole file system not yet reported through f.
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
