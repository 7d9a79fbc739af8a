package durable_test

import (
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

// trustingOS is durable.OS trusting its syncfs on any file system, so that
// what the group does with real files' devices is tested wherever the
// temporary directory lives (tmpfs, an overlay).
type trustingOS struct{ durable.FS }

func (trustingOS) CanSyncFS(durable.File) error { return nil }

func (t trustingOS) SyncFS(f durable.File) error { return t.FS.(durable.WholeSyncer).SyncFS(f) }

// devInfo is a file's description naming the device of its file system.
type devInfo struct {
	fs.FileInfo
	dev uint64
}

func (i devInfo) Sys() any { return &syscall.Stat_t{Dev: i.dev} }

// devFile is a file on the device dev.
type devFile struct {
	countFile
	dev uint64
}

func (f *devFile) Stat() (fs.FileInfo, error) { return devInfo{dev: f.dev}, nil }

// TestSyncGroupOtherFileSystem: a file on another file system than the
// group's directory (a mount inside the data directory) is not made
// durable by syncing the directory's: it syncs itself.
func TestSyncGroupOtherFileSystem(t *testing.T) {
	dir := t.TempDir()
	g, err := durable.NewSyncGroup(trustingOS{durable.OS}, dir)
	require.NoError(t, err)
	defer g.Close()
	require.True(t, g.Whole())
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(dir, &st))

	other := &devFile{countFile: countFile{name: "elsewhere/log.bin"}, dev: uint64(st.Dev) + 1} //nolint:unconvert
	require.NoError(t, g.Sync(other))
	require.EqualValues(t, 1, other.syncs.Load(), "synced on its own")

	same := &devFile{countFile: countFile{name: "log.bin"}, dev: uint64(st.Dev)} //nolint:unconvert
	require.NoError(t, g.Sync(same))
	require.Zero(t, same.syncs.Load(), "synced with its file system")
}
