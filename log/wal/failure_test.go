package wal_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/wal"
)

// failOnce is a Fault that fails the n-th operation of kind op on a path
// match accepts with err, once.
func failOnce(op logtest.Op, n int, match func(string) bool, err error) logtest.Fault {
	var mu sync.Mutex
	seen := 0
	return func(o logtest.Op, path string) error {
		if o != op || !match(path) {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == n {
			return err
		}
		return nil
	}
}

func inJournal(root string) func(string) bool {
	dir := filepath.Join(root, wal.DirName) + string(filepath.Separator)
	return func(p string) bool { return strings.HasPrefix(p, dir) }
}

// copyJournal copies root/wal to image/wal: what a crash would leave of
// the journal, the data files being created empty by the caller.
func copyJournal(t *testing.T, root, image string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(image, wal.DirName), 0o755))
	for _, n := range walDir(t, root) {
		b, err := os.ReadFile(filepath.Join(root, wal.DirName, n))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(image, wal.DirName, n), b, 0o644))
	}
}

// TestFailedJournalWrite: a write of the journal that fails (half of it
// written) fails that Sync; the journal is cut back and works on, and a
// replay of it holds only the writes whose Sync succeeded.
func TestFailedJournalWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int // which write of the journal fails
	}{{"entries", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			ffs := logtest.NewFaultFS(durable.OS)
			j := openJournal(t, ffs, root, wal.Options{})
			p := filepath.Join(root, "p", "log.bin")
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			f, err := j.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
			require.NoError(t, err)

			ffs.SetFault(failOnce(logtest.OpWrite, tc.n, inJournal(root), logtest.ErrShortWrite))
			_, err = f.WriteAt([]byte("lost"), 0)
			require.NoError(t, err)
			err = f.Sync()
			require.ErrorIs(t, err, logtest.ErrShortWrite)
			require.NoError(t, j.Broken(), "a failed write is cut back; it does not break the journal")

			_, err = f.WriteAt([]byte("kept"), 4)
			require.NoError(t, err)
			require.NoError(t, f.Sync())

			image := t.TempDir()
			copyJournal(t, root, image)
			makeFile(t, image, "p/log.bin", "")
			require.NoError(t, wal.Replay(durable.OS, image, wal.Options{Journaled: journaledLogs}))
			require.Equal(t, "\x00\x00\x00\x00kept", readString(t, filepath.Join(image, "p", "log.bin")),
				"only the write whose Sync succeeded is replayed")
			require.Empty(t, walDir(t, image), "the cut-back journal replays whole: nothing is set aside")

			require.NoError(t, f.Close())
			require.NoError(t, j.Close())
		})
	}
}

// TestFailedJournalFsyncBreaks: a failed fsync of the journal breaks it:
// that Sync and every later journaled one fail, Close removes nothing
// (the failure was the Syncs' to report), and the next Open replays what
// the journal holds.
func TestFailedJournalFsyncBreaks(t *testing.T) {
	root := t.TempDir()
	ffs := logtest.NewFaultFS(durable.OS)
	j := openJournal(t, ffs, root, wal.Options{})
	p := filepath.Join(root, "p", "log.bin")
	f := journaledWrite(t, j, root, "p/log.bin", "first")
	require.NoError(t, j.Broken())

	ffs.SetFault(failOnce(logtest.OpSync, 1, inJournal(root), logtest.ErrInjected))
	_, err := f.WriteAt([]byte("second"), 5)
	require.NoError(t, err)
	require.ErrorIs(t, f.Sync(), logtest.ErrInjected)
	require.ErrorIs(t, j.Broken(), logtest.ErrInjected)

	// The fault was one-shot: the journal stays broken all the same.
	_, err = f.WriteAt([]byte("third"), 11)
	require.NoError(t, err)
	require.ErrorIs(t, f.Sync(), logtest.ErrInjected)
	g := journaledWriteErr(t, j, root, "q/log.bin", "other file")
	require.ErrorIs(t, g, logtest.ErrInjected, "every journaled file's Sync fails")
	require.ErrorIs(t, j.Checkpoint(), logtest.ErrInjected)

	require.NoError(t, f.Close())
	before := walDir(t, root)
	require.Equal(t, []string{wal.GenerationFileName(1)}, before)
	require.NoError(t, j.Close())
	require.Equal(t, before, walDir(t, root), "a broken journal's Close removes nothing")

	// A crash now would leave the data file empty: the journal brings back
	// what it holds (the failed fsync's entries may or may not be in it).
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	j = openJournal(t, durable.OS, root, wal.Options{})
	require.True(t, strings.HasPrefix(readString(t, p), "first"), readString(t, p))
	require.NotContains(t, readString(t, p), "third", "a Sync refused by the broken journal wrote nothing to it")
	require.Empty(t, asides(t, root))
	require.NoError(t, j.Close())
}

// journaledWriteErr is journaledWrite's Sync error, the file closed.
func journaledWriteErr(t *testing.T, j *wal.FS, root, rel, data string) error {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := j.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(data), 0)
	require.NoError(t, err)
	serr := f.Sync()
	require.NoError(t, f.Close())
	return serr
}

// TestFailedCheckpointFsyncBreaks: a checkpoint whose fsync of a data
// file fails breaks the journal and keeps the generation that holds the
// file's writes.
func TestFailedCheckpointFsyncBreaks(t *testing.T) {
	root := t.TempDir()
	ffs := logtest.NewFaultFS(durable.OS)
	j := openJournal(t, ffs, root, wal.Options{})
	p := filepath.Join(root, "p", "log.bin")
	f := journaledWrite(t, j, root, "p/log.bin", "abc")

	ffs.SetFault(failOnce(logtest.OpSync, 1, func(path string) bool { return path == p }, logtest.ErrInjected))
	err := j.Checkpoint()
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.ErrorIs(t, j.Broken(), logtest.ErrInjected)
	require.Contains(t, walDir(t, root), wal.GenerationFileName(1), "the generation holding the unsynced writes stays")

	_, err = f.WriteAt([]byte("def"), 3)
	require.NoError(t, err)
	require.ErrorIs(t, f.Sync(), logtest.ErrInjected)
	require.NoError(t, f.Close())
	require.NoError(t, j.Close())
	require.Contains(t, walDir(t, root), wal.GenerationFileName(1))

	// The journal replays what it holds into a file that lost it.
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	j = openJournal(t, durable.OS, root, wal.Options{})
	require.Equal(t, "abc", readString(t, p)[:3])
	require.NoError(t, j.Close())
}

// TestSyncAfterClose: a journaled Sync after Close fails with ErrClosed.
func TestSyncAfterClose(t *testing.T) {
	root := t.TempDir()
	j := openJournal(t, durable.OS, root, wal.Options{})
	f := journaledWrite(t, j, root, "p/log.bin", "abc")
	require.NoError(t, j.Close())
	_, err := f.WriteAt([]byte("def"), 3)
	require.NoError(t, err)
	require.True(t, errors.Is(f.Sync(), wal.ErrClosed))
	require.NoError(t, f.Close())
}

// TestCutBackOnFullDisk: a log whose write failed on a full disk cuts its
// file back to the end of what it acknowledged. The journal holds writes
// only below that cut, which a replay puts back where they were, so the
// cut needs no checkpoint — which a full disk could not run, since it
// cannot make the next generation — and the disk being full does not
// leave the failed write's bytes in the file. A cut below what the
// journal holds does need one, and fails on that disk, leaving the file
// as it was.
func TestCutBackOnFullDisk(t *testing.T) {
	root := t.TempDir()
	ffs := logtest.NewFaultFS(durable.OS)
	j := openJournal(t, ffs, root, wal.Options{})
	p := filepath.Join(root, "p", "log.bin")
	f := journaledWrite(t, j, root, "p/log.bin", "acked")
	_, err := f.WriteAt([]byte("torn"), 5) // a failed write leaves part of itself
	require.NoError(t, err)

	ffs.SetFault(logtest.FullDisk(nil))
	require.NoError(t, f.Truncate(5), "a cut at the end of what the journal holds needs no checkpoint")
	require.Equal(t, "acked", readString(t, p))
	require.Equal(t, []uint64{1}, generations(t, root), "no checkpoint ran")

	err = f.Truncate(2)
	require.ErrorIs(t, err, syscall.ENOSPC, "a cut below what the journal holds needs a checkpoint, which cannot make its next generation")
	require.Equal(t, "acked", readString(t, p), "a cut that could not be made safe is not made")
	require.NoError(t, j.Broken(), "a checkpoint that could not start breaks nothing")

	ffs.SetFault(nil) // space returns
	require.NoError(t, f.Truncate(2))
	require.Equal(t, "ac", readString(t, p))
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, j.Close())
}

// TestFailedCloseFsyncBreaks: a journaled file is not fsync-ed as it
// closes (on a full disk that could fail, and would break the journal for
// nothing); the next checkpoint, or the journal's Close, fsyncs it through
// a descriptor of its own. When that fails the journal breaks and removes
// nothing, so that a power loss and the next Open's replay bring back
// what it acknowledged.
func TestFailedCloseFsyncBreaks(t *testing.T) {
	for _, then := range []string{"close", "checkpoint, then close"} {
		t.Run(then, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "p", log.FileName)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, nil, 0o644))
			c, err := logtest.NewCrashFS(root)
			require.NoError(t, err)
			ffs := logtest.NewFaultFS(c)
			j, err := wal.Open(ffs, root, wal.Options{Journaled: journaledLogs})
			require.NoError(t, err)
			f, err := j.OpenFile(p, os.O_RDWR, 0)
			require.NoError(t, err)
			_, err = f.WriteAt([]byte("acked"), 0)
			require.NoError(t, err)
			require.NoError(t, f.Sync(), "acknowledged through the journal")

			ffs.SetFault(failOnce(logtest.OpSync, 1, func(s string) bool { return s == p }, logtest.ErrInjected))
			require.NoError(t, f.Close(), "a close does not fsync")
			if then == "close" {
				require.ErrorIs(t, j.Close(), logtest.ErrInjected)
			} else {
				require.ErrorIs(t, j.Checkpoint(), logtest.ErrInjected)
				require.NoError(t, j.Close(), "a broken journal closes as it stands")
			}
			ffs.SetFault(nil)
			require.ErrorIs(t, j.Broken(), logtest.ErrInjected)
			require.NotEmpty(t, generations(t, root), "nothing of a broken journal is removed")

			image := filepath.Join(t.TempDir(), "image")
			require.NoError(t, c.Crash(image))
			require.NoError(t, wal.Replay(durable.OS, image, wal.Options{Journaled: journaledLogs}))
			require.Equal(t, "acked", readString(t, filepath.Join(image, "p", log.FileName)))
		})
	}
}

// TestRemoveAfterClose: a clean Close leaves nothing to replay, so what is
// removed through the FS afterwards needs no checkpoint (which a closed
// journal could not run).
func TestRemoveAfterClose(t *testing.T) {
	root := t.TempDir()
	j := openJournal(t, durable.OS, root, wal.Options{})
	f := journaledWrite(t, j, root, "p/log.bin", "x")
	require.NoError(t, f.Close())
	require.NoError(t, j.Close())
	require.NoError(t, j.Remove(filepath.Join(root, "p", log.FileName)))
}
