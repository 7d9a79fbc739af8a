//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/server/datalock"
)

// TestCLILockDataDirs: the lock of a data directory above the file is
// found; while a server holds it the tools are refused, and while a tool
// holds it no server starts. Directories without a lock file are passed
// over and left without one.
func TestCLILockDataDirs(t *testing.T) {
	data := t.TempDir()
	file := filepath.Join(data, "broker-000001", "topics", "t", "log.bin")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))

	server, err := datalock.Acquire(durable.OS, data)
	require.NoError(t, err)
	_, err = lockDataDirs(file)
	var le *datalock.LockedError
	require.ErrorAs(t, err, &le)
	require.Equal(t, datalock.Path(data), le.Path)
	require.Equal(t, os.Getpid(), le.PID)
	require.NoError(t, server.Release())

	release, err := lockDataDirs(file)
	require.NoError(t, err)
	_, err = datalock.Acquire(durable.OS, data)
	require.ErrorIs(t, err, datalock.ErrLocked)
	release()
	require.NoFileExists(t, datalock.Path(filepath.Dir(file)))
	server, err = datalock.Acquire(durable.OS, data)
	require.NoError(t, err)
	require.NoError(t, server.Release())
}
