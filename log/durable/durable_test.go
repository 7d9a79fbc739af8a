package durable_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// TestWriteFileReplaces pins docs/design.md § Invariants, 2 for the happy path:
// the target gets the new content through temp file, fsync, rename and a
// directory fsync, in that order, and no temp file is left.
func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.json")
	ffs := logtest.NewFaultFS(nil)
	require.NoError(t, durable.WriteFile(ffs, path, []byte("v1")))
	require.NoError(t, durable.WriteFile(ffs, path, []byte("v2")))
	got, err := durable.ReadFile(ffs, path)
	require.NoError(t, err)
	require.Equal(t, "v2", string(got))
	require.Equal(t, 2, ffs.Count(logtest.OpSync))
	require.Equal(t, 2, ffs.Count(logtest.OpRename))
	require.Equal(t, 2, ffs.Count(logtest.OpSyncDir))
	_, err = os.Stat(path + durable.TempSuffix)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestWriteFileFailures fails each step of WriteFile in turn: the target
// keeps its old content or gets the new one, never a torn mix; the temp
// file is removed; the error is reported (docs/design.md § Invariants, 2).
func TestWriteFileFailures(t *testing.T) {
	for _, tc := range []struct {
		op      logtest.Op
		fault   error
		wantNew bool // the rename happened before the failure
	}{
		{logtest.OpOpen, logtest.ErrInjected, false},
		{logtest.OpWrite, logtest.ErrInjected, false},
		{logtest.OpWrite, logtest.ErrShortWrite, false},
		{logtest.OpSync, logtest.ErrInjected, false},
		{logtest.OpClose, logtest.ErrInjected, false},
		{logtest.OpRename, logtest.ErrInjected, false},
		{logtest.OpSyncDir, logtest.ErrInjected, true},
	} {
		t.Run(string(tc.op)+"/"+tc.fault.Error(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "meta.json")
			require.NoError(t, os.WriteFile(path, []byte("old content"), 0o644))
			ffs := logtest.NewFaultFS(nil)
			ffs.SetFault(func(op logtest.Op, _ string) error {
				if op == tc.op {
					return tc.fault
				}
				return nil
			})
			err := durable.WriteFile(ffs, path, []byte("new content, longer"))
			require.Error(t, err)
			if errors.Is(tc.fault, logtest.ErrShortWrite) {
				require.ErrorIs(t, err, logtest.ErrShortWrite)
			} else {
				require.ErrorIs(t, err, logtest.ErrInjected)
			}
			got, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			if tc.wantNew {
				require.Equal(t, "new content, longer", string(got))
			} else {
				require.Equal(t, "old content", string(got))
			}
			_, serr := os.Stat(path + durable.TempSuffix)
			require.ErrorIs(t, serr, fs.ErrNotExist, "the temp file is removed")
		})
	}
}

// TestRemoveTemp: a leftover temp file is removed and the directory synced;
// the committed file is untouched; no temp file is not an error.
func TestRemoveTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.json")
	require.NoError(t, os.WriteFile(path, []byte("committed"), 0o644))
	require.NoError(t, os.WriteFile(path+durable.TempSuffix, []byte("torn"), 0o644))
	ffs := logtest.NewFaultFS(nil)
	require.NoError(t, durable.RemoveTemp(ffs, path))
	require.Equal(t, 1, ffs.Count(logtest.OpSyncDir))
	_, err := os.Stat(path + durable.TempSuffix)
	require.ErrorIs(t, err, fs.ErrNotExist)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "committed", string(got))
	require.NoError(t, durable.RemoveTemp(ffs, path))
	require.Equal(t, 1, ffs.Count(logtest.OpSyncDir), "nothing removed, nothing synced")

	require.NoError(t, os.WriteFile(path+durable.TempSuffix, nil, 0o644))
	ffs.SetFault(logtest.FailNth(logtest.OpRemove, 1))
	require.ErrorIs(t, durable.RemoveTemp(ffs, path), logtest.ErrInjected)
}

// TestMkdirAll pins docs/design.md § Invariants, 1 for directories: MkdirAll
// creates the missing ones and fsyncs the parent of each, reports whether it
// created anything, and refuses a path through a file.
func TestMkdirAll(t *testing.T) {
	root := t.TempDir()
	ffs := logtest.NewFaultFS(nil)
	created, err := durable.MkdirAll(ffs, filepath.Join(root, "a", "b", "c"))
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, 3, ffs.Count(logtest.OpMkdir))
	require.Equal(t, 4, ffs.Count(logtest.OpSyncDir), "root, a and b each gain an entry; root existed, so its parent is synced too")
	info, err := os.Stat(filepath.Join(root, "a", "b", "c"))
	require.NoError(t, err)
	require.True(t, info.IsDir())

	created, err = durable.MkdirAll(ffs, filepath.Join(root, "a", "b"))
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, 0, ffs.Count(logtest.OpMkdir)-3, "nothing created")
	require.Equal(t, 5, ffs.Count(logtest.OpSyncDir), "an existing directory gets its parent synced")

	file := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = durable.MkdirAll(ffs, file)
	require.ErrorIs(t, err, syscall.ENOTDIR)
	_, err = durable.MkdirAll(ffs, filepath.Join(file, "sub"))
	require.Error(t, err)

	ffs.SetFault(logtest.FailNth(logtest.OpSyncDir, 1))
	_, err = durable.MkdirAll(ffs, filepath.Join(root, "x"))
	require.ErrorIs(t, err, logtest.ErrInjected, "a directory whose entry is not durable is an error")
}

// TestMkdirAllLosingARaceStillSyncs covers two callers creating the same
// directory at once. The one whose Mkdir finds the directory already there
// must not return before the parent's entry is durable: it is about to put
// files in that directory and acknowledge them, and the winner may not have
// reached its own directory fsync yet.
func TestMkdirAllLosingARaceStillSyncs(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "consumer")
	ffs := logtest.NewFaultFS(nil)
	var syncedParent bool
	ffs.SetFault(func(op logtest.Op, path string) error {
		switch {
		case op == logtest.OpMkdir && path == dir:
			// The other caller wins between our Stat and our Mkdir.
			require.NoError(t, os.Mkdir(dir, 0o755))
			return fs.ErrExist
		case op == logtest.OpSyncDir && path == root:
			syncedParent = true
		}
		return nil
	})
	created, err := durable.MkdirAll(ffs, dir)
	require.NoError(t, err)
	require.False(t, created, "the other caller created it")
	require.True(t, syncedParent, "the parent must be fsync-ed before MkdirAll returns")
}

// TestSyncDirAndReadFile cover the two small helpers.
func TestSyncDirAndReadFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, durable.SyncDir(durable.OS, dir))
	require.ErrorIs(t, durable.SyncDir(durable.OS, filepath.Join(dir, "missing")), fs.ErrNotExist)
	_, err := durable.ReadFile(durable.OS, filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("content"), 0o644))
	got, err := durable.ReadFile(durable.OS, path)
	require.NoError(t, err)
	require.Equal(t, "content", string(got))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	got, err = durable.ReadFile(durable.OS, empty)
	require.NoError(t, err)
	require.Empty(t, got)
}

// TestReadSmallFile: a metadata reader gets the bytes of a regular file
// within the limit, and a typed refusal, before any read, for a directory
// or a file over the limit; a missing file is fs.ErrNotExist.
func TestReadSmallFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	require.NoError(t, os.WriteFile(ok, []byte("12345"), 0o644))

	data, err := durable.ReadSmallFile(durable.OS, ok, 5)
	require.NoError(t, err)
	require.Equal(t, []byte("12345"), data)

	_, err = durable.ReadSmallFile(durable.OS, ok, 4)
	require.ErrorIs(t, err, durable.ErrTooLarge)

	_, err = durable.ReadSmallFile(durable.OS, dir, 1<<20)
	require.ErrorIs(t, err, durable.ErrNotRegular)

	_, err = durable.ReadSmallFile(durable.OS, filepath.Join(dir, "missing"), 5)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// WriteSynced creates a file, or replaces what one held, with exactly
// data.
func TestDurableWriteSynced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, durable.WriteSynced(durable.OS, path, []byte("longer content")))
	require.NoError(t, durable.WriteSynced(durable.OS, path, []byte("short")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "short", string(got))
}
