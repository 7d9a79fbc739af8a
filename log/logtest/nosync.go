package logtest

import (
	"io/fs"

	"github.com/pystream/pystream/log/durable"
)

// NoSyncFS is the file system it embeds with every fsync skipped: Sync and
// SyncDir do nothing, everything else goes to FS. Nothing written through it
// is durable. It is for measuring what fsync costs (the same run with and
// without it) and for opening crashed copies that are only checked, never
// crashed again; never for data anyone keeps.
//
//	fsys := logtest.NoSyncFS{FS: durable.OS}
type NoSyncFS struct{ durable.FS }

// OpenFile opens the file on FS; its Sync does nothing.
func (n NoSyncFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	f, err := n.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

// SyncDir does nothing.
func (NoSyncFS) SyncDir(string) error { return nil }

type noSyncFile struct{ durable.File }

// Sync does nothing.
func (noSyncFile) Sync() error { return nil }
