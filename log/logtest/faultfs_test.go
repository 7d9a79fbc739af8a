package logtest_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// TestFailNth: exactly the n-th operation of the kind fails, counted from
// when the fault is installed; Count sees every attempt.
func TestFailNth(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	f, err := ffs.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Sync())
	ffs.SetFault(logtest.FailNth(logtest.OpSync, 2))
	require.NoError(t, f.Sync())
	require.ErrorIs(t, f.Sync(), logtest.ErrInjected)
	require.NoError(t, f.Sync())
	_, err = f.WriteAt([]byte("x"), 0)
	require.NoError(t, err, "other operations are not affected")
	require.Equal(t, 4, ffs.Count(logtest.OpSync))
	require.Equal(t, 1, ffs.Count(logtest.OpWrite))
}

// TestFailFrom: every operation of the kind from the n-th on fails, until
// the fault is removed.
func TestFailFrom(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	f, err := ffs.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	ffs.SetFault(logtest.FailFrom(logtest.OpWrite, 2))
	_, err = f.WriteAt([]byte("a"), 0)
	require.NoError(t, err)
	for range 3 {
		_, err = f.WriteAt([]byte("b"), 1)
		require.ErrorIs(t, err, logtest.ErrInjected)
	}
	ffs.SetFault(nil)
	_, err = f.WriteAt([]byte("c"), 1)
	require.NoError(t, err)
	buf := make([]byte, 2)
	_, err = f.ReadAt(buf, 0)
	require.NoError(t, err)
	require.Equal(t, "ac", string(buf), "failed writes wrote nothing")
}

// TestDieBefore: every operation of any kind from the n-th on fails, and
// Total counts all of them.
func TestDieBefore(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	ffs.SetFault(logtest.DieBefore(3))
	path := filepath.Join(t.TempDir(), "f")
	f, err := ffs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644) // step 1
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte("a"), 0) // step 2
	require.NoError(t, err)
	require.ErrorIs(t, f.Sync(), logtest.ErrInjected, "step 3")
	_, err = f.WriteAt([]byte("b"), 1)
	require.ErrorIs(t, err, logtest.ErrInjected, "step 4: the process is dead")
	require.ErrorIs(t, ffs.SyncDir(filepath.Dir(path)), logtest.ErrInjected)
	require.Equal(t, 5, ffs.Total())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "a", string(got), "what the run wrote before it died stays")
}

// TestShortWrite: a short write puts down half the bytes and fails with an
// error wrapping io.ErrShortWrite and ErrShortWrite.
func TestShortWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	ffs := logtest.NewFaultFS(nil)
	f, err := ffs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	ffs.SetFault(func(op logtest.Op, _ string) error {
		if op == logtest.OpWrite {
			return logtest.ErrShortWrite
		}
		return nil
	})
	n, err := f.WriteAt([]byte("12345678"), 0)
	require.Equal(t, 4, n)
	require.ErrorIs(t, err, io.ErrShortWrite)
	require.ErrorIs(t, err, logtest.ErrShortWrite)
	require.NoError(t, f.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "1234", string(got))
}

// TestEveryOpCanFail: each operation of the FS and its files consults the
// fault, fails with ErrInjected without running, and a failed Close still
// releases the file.
func TestEveryOpCanFail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("data"), 0o644))
	ffs := logtest.NewFaultFS(nil)
	f, err := ffs.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	ffs.SetFault(func(logtest.Op, string) error { return logtest.ErrInjected })

	_, err = ffs.OpenFile(path, os.O_RDONLY, 0)
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.ErrorIs(t, ffs.Rename(path, path+".2"), logtest.ErrInjected)
	require.ErrorIs(t, ffs.Remove(path), logtest.ErrInjected)
	require.ErrorIs(t, ffs.Mkdir(filepath.Join(dir, "d"), 0o755), logtest.ErrInjected)
	require.ErrorIs(t, ffs.SyncDir(dir), logtest.ErrInjected)
	_, err = f.WriteAt([]byte("x"), 0)
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.ErrorIs(t, f.Sync(), logtest.ErrInjected)
	require.ErrorIs(t, f.Truncate(0), logtest.ErrInjected)
	require.ErrorIs(t, f.Close(), logtest.ErrInjected)
	require.True(t, errors.Is(f.Close(), os.ErrClosed), "the real file was closed despite the fault")

	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "data", string(got), "no failed operation ran")
	_, err = os.Stat(filepath.Join(dir, "d"))
	require.ErrorIs(t, err, os.ErrNotExist)
	for _, op := range []logtest.Op{logtest.OpOpen, logtest.OpRename, logtest.OpRemove, logtest.OpMkdir, logtest.OpSyncDir, logtest.OpWrite, logtest.OpSync, logtest.OpTruncate} {
		require.Positive(t, ffs.Count(op), op)
	}

	// Reads, Stat and ReadDir pass through.
	ffs.SetFault(nil)
	entries, err := ffs.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	info, err := ffs.Stat(path)
	require.NoError(t, err)
	require.Equal(t, int64(4), info.Size())
}
