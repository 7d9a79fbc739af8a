package durable_test

import (
	"io/fs"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

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
	g, err := durable.NewSyncGroup(durable.OS, dir)
	require.NoError(t, err)
	defer g.Close()
	if !g.Whole() {
		t.Skip("the temporary directory's file system is not one whose syncfs vouches for its files")
	}
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(dir, &st))

	other := &devFile{countFile: countFile{name: "elsewhere/log.bin"}, dev: uint64(st.Dev) + 1} //nolint:unconvert
	require.NoError(t, g.Sync(other))
	require.EqualValues(t, 1, other.syncs.Load(), "synced on its own")

	same := &devFile{countFile: countFile{name: "log.bin"}, dev: uint64(st.Dev)} //nolint:unconvert
	require.NoError(t, g.Sync(same))
	require.Zero(t, same.syncs.Load(), "synced with its file system")
}

// TestSyncGroupCloseWaitsAndFallsBack: Close waits for the sync under
// way, and a Sync after Close is the file's own.
func TestSyncGroupCloseWaitsAndFallsBack(t *testing.T) {
	dir := t.TempDir()
	g, err := durable.NewSyncGroup(durable.OS, dir)
	require.NoError(t, err)
	if !g.Whole() {
		t.Skip("the temporary directory's file system is not one whose syncfs vouches for its files")
	}
	f := &countFile{name: "log.bin"}
	done := make(chan error, 1)
	go func() { done <- g.Sync(f) }()
	require.NoError(t, g.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Sync did not return after Close")
	}
	require.NoError(t, g.Sync(f))
	require.GreaterOrEqual(t, f.syncs.Load(), int32(1), "after Close a file syncs itself")
	require.NoError(t, g.Close(), "closing twice is harmless")
}
