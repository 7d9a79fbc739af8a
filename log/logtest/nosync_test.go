package logtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// TestNoSyncFS: syncs never reach the file system underneath; everything
// else does.
func TestNoSyncFS(t *testing.T) {
	under := logtest.NewFaultFS(nil)
	under.SetFault(func(op logtest.Op, _ string) error {
		if op == logtest.OpSync || op == logtest.OpSyncDir {
			return logtest.ErrInjected
		}
		return nil
	})
	fsys := logtest.NoSyncFS{FS: under}
	dir := t.TempDir()
	f, err := fsys.OpenFile(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, fsys.SyncDir(dir))
	require.Zero(t, under.Count(logtest.OpSync)+under.Count(logtest.OpSyncDir), "no sync reached the file system")
	require.Equal(t, 1, under.Count(logtest.OpWrite))
	got, err := os.ReadFile(filepath.Join(dir, "f"))
	require.NoError(t, err)
	require.Equal(t, "x", string(got))
}
