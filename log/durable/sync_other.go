//go:build !linux

package durable

import (
	"errors"
	"fmt"
	"os"
)

// datasync falls back to a full fsync where fdatasync is not available.
func datasync(f *os.File) error { return f.Sync() }

// syncfs is not available: a SyncGroup falls back to one sync per file.
func syncfs(f *os.File) error {
	return fmt.Errorf("durable: syncfs %s: %w", f.Name(), errors.ErrUnsupported)
}
