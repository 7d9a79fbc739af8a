//go:build !linux

package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// datasync falls back to a full fsync where fdatasync is not available.
func datasync(f *os.File) error { return f.Sync() }

// canSyncfs: syncfs is not available here; a SyncGroup syncs file by file.
func canSyncfs(f *os.File) error {
	return fmt.Errorf("durable: syncfs %s: %w", f.Name(), errors.ErrUnsupported)
}

// syncfs is not available: a SyncGroup falls back to one sync per file.
func syncfs(f *os.File) error {
	return fmt.Errorf("durable: syncfs %s: %w", f.Name(), errors.ErrUnsupported)
}

// deviceOf cannot tell file systems apart here; no group syncs a whole
// file system on these platforms.
func deviceOf(fs.FileInfo) (uint64, bool) { return 0, false }
