package wal_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/wal"
)

// TestGenerationsRotate: with small generations the journal moves on to
// the next (made ahead, filled with zeros) as each fills up, checkpoints
// remove the old ones, and the writes are in their files.
func TestGenerationsRotate(t *testing.T) {
	root := t.TempDir()
	j := openJournal(t, durable.OS, root, wal.Options{GenerationBytes: 4096, CheckpointBytes: 16384})
	p := filepath.Join(root, "p", "log.bin")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := j.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	chunk := []byte(strings.Repeat("x", 1000))
	var newest uint64
	for i := range 64 {
		_, err := f.WriteAt(chunk, int64(i*len(chunk)))
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		gens := generations(t, root)
		// 16 KiB between checkpoints of 4 KiB generations, a spare, and
		// a background checkpoint that may not have removed them yet.
		require.LessOrEqual(t, len(gens), 12, "old generations are removed: %v", gens)
		newest = max(newest, gens[len(gens)-1])
	}
	require.GreaterOrEqual(t, newest, uint64(3), "a full generation moves on to the next without being asked")
	require.NoError(t, j.Checkpoint()) // waits for a background one, if any
	gens := generations(t, root)
	require.NotEmpty(t, gens)
	require.LessOrEqual(t, len(gens), 2, "the current generation and perhaps a spare: %v", gens)
	require.GreaterOrEqual(t, gens[0], newest)
	info, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, int64(64*len(chunk)), info.Size())
	require.NoError(t, f.Close())
	require.NoError(t, j.Close())
	require.Empty(t, walDir(t, root))
}

// watch is a FaultFS over the OS that records, when an operation of op on
// path is attempted, the generation files the journal then holds.
type watch struct {
	t    *testing.T
	root string
	fs   *logtest.FaultFS

	mu   sync.Mutex
	seen map[string][]uint64
}

func newWatch(t *testing.T, root string, op logtest.Op, paths ...string) *watch {
	w := &watch{t: t, root: root, fs: logtest.NewFaultFS(durable.OS), seen: map[string][]uint64{}}
	w.fs.SetFault(func(o logtest.Op, path string) error {
		if o != op {
			return nil
		}
		for _, p := range paths {
			if path == p {
				gens := generationsNow(root)
				w.mu.Lock()
				w.seen[p] = gens
				w.mu.Unlock()
			}
		}
		return nil
	})
	return w
}

// generationsNow lists root/wal's generations without a *testing.T, for a
// fault callback.
func generationsNow(root string) []uint64 {
	entries, _ := os.ReadDir(filepath.Join(root, wal.DirName))
	gens := []uint64{}
	for _, e := range entries {
		if g, ok := wal.ParseGenerationFileName(e.Name()); ok {
			gens = append(gens, g)
		}
	}
	return gens
}

func (w *watch) at(path string) []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	gens, ok := w.seen[path]
	require.True(w.t, ok, "no operation on %s was seen", path)
	return gens
}

// journaledWrite opens root/rel through j, writes data and syncs it
// through the journal, leaving it open.
func journaledWrite(t *testing.T, j *wal.FS, root, rel, data string) durable.File {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := j.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(data), 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	return f
}

// TestCheckpointBeforeUndoableOps: Remove of a directory above a file the
// journal holds writes to, Rename of one, and OpenFile with O_TRUNC of
// one each run a checkpoint first: when the base sees the operation, the
// generation that held the writes is gone.
func TestCheckpointBeforeUndoableOps(t *testing.T) {
	t.Run("remove directory", func(t *testing.T) {
		root := t.TempDir()
		dir := filepath.Join(root, "topic")
		w := newWatch(t, root, logtest.OpRemove, dir)
		j := openJournal(t, w.fs, root, wal.Options{})
		f := journaledWrite(t, j, root, "topic/log.bin", "abc")
		require.Equal(t, []uint64{1}, generations(t, root))
		// The file goes behind the journal's back, so that removing its
		// directory is the first operation that would need a checkpoint.
		require.NoError(t, os.Remove(filepath.Join(dir, "log.bin")))
		require.NoError(t, j.Remove(dir))
		require.Equal(t, []uint64{2}, w.at(dir), "generation 1, which held the writes, was removed before the directory")
		require.NoError(t, f.Close())
		require.NoError(t, j.Close())
	})
	t.Run("remove file", func(t *testing.T) {
		root := t.TempDir()
		p := filepath.Join(root, "p", "log.bin")
		w := newWatch(t, root, logtest.OpRemove, p)
		j := openJournal(t, w.fs, root, wal.Options{})
		f := journaledWrite(t, j, root, "p/log.bin", "abc")
		require.NoError(t, f.Close())
		require.NoError(t, j.Remove(p))
		require.Equal(t, []uint64{2}, w.at(p))
		require.NoError(t, j.Close())
	})
	t.Run("rename directory", func(t *testing.T) {
		root := t.TempDir()
		to := filepath.Join(root, "aside")
		w := newWatch(t, root, logtest.OpRename, to) // FaultFS names a rename by its new path
		j := openJournal(t, w.fs, root, wal.Options{})
		f := journaledWrite(t, j, root, "topic/p/log.bin", "abc")
		require.NoError(t, f.Close())
		require.NoError(t, j.Rename(filepath.Join(root, "topic"), to))
		require.Equal(t, []uint64{2}, w.at(to))
		require.Equal(t, "abc", readString(t, filepath.Join(to, "p", "log.bin")))
		require.NoError(t, j.Close())
	})
	t.Run("rename onto a journaled file", func(t *testing.T) {
		root := t.TempDir()
		p := filepath.Join(root, "p", "log.bin")
		w := newWatch(t, root, logtest.OpRename, p)
		j := openJournal(t, w.fs, root, wal.Options{})
		f := journaledWrite(t, j, root, "p/log.bin", "abc")
		require.NoError(t, f.Close())
		tmp := filepath.Join(root, "p", "tmp")
		require.NoError(t, os.WriteFile(tmp, []byte("new"), 0o644))
		require.NoError(t, j.Rename(tmp, p))
		require.Equal(t, []uint64{2}, w.at(p), "a replay would write the old file's bytes into the new one")
		require.NoError(t, j.Close())
	})
	t.Run("open with O_TRUNC", func(t *testing.T) {
		root := t.TempDir()
		p := filepath.Join(root, "p", "log.bin")
		w := newWatch(t, root, logtest.OpOpen, p)
		j := openJournal(t, w.fs, root, wal.Options{})
		f := journaledWrite(t, j, root, "p/log.bin", "abc")
		require.NoError(t, f.Close())
		f, err := j.OpenFile(p, os.O_RDWR|os.O_TRUNC, 0o644)
		require.NoError(t, err)
		require.Equal(t, []uint64{2}, w.at(p))
		require.NoError(t, f.Close())
		require.NoError(t, j.Close())
	})
	t.Run("truncate", func(t *testing.T) {
		root := t.TempDir()
		p := filepath.Join(root, "p", "log.bin")
		w := newWatch(t, root, logtest.OpTruncate, p)
		j := openJournal(t, w.fs, root, wal.Options{})
		f := journaledWrite(t, j, root, "p/log.bin", "abcdef")
		require.NoError(t, f.Truncate(2))
		require.Equal(t, []uint64{2}, w.at(p))
		require.NoError(t, f.Close())
		require.NoError(t, j.Close())
		require.Equal(t, "ab", readString(t, p))
	})
}

// TestNoCheckpointWithoutWrites: operations on paths the journal holds no
// writes to leave its generation alone.
func TestNoCheckpointWithoutWrites(t *testing.T) {
	root := t.TempDir()
	j := openJournal(t, durable.OS, root, wal.Options{})
	f := journaledWrite(t, j, root, "p/log.bin", "abc")
	// A sibling whose name shares the journaled directory's as a prefix.
	other := makeFile(t, root, "p2/log.bin", "x")
	require.NoError(t, j.Remove(other))
	require.NoError(t, j.Remove(filepath.Dir(other)))
	require.NoError(t, j.Rename(makeFile(t, root, "q/a", "a"), filepath.Join(root, "q", "b")))
	g, err := j.OpenFile(filepath.Join(root, "q", "b"), os.O_RDWR|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	// A journaled file written but not yet synced has nothing in the
	// journal either.
	h, err := j.OpenFile(makeFile(t, root, "r/log.bin", ""), os.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = h.WriteAt([]byte("unsynced"), 0)
	require.NoError(t, err)
	require.NoError(t, h.Truncate(0))
	require.Equal(t, []uint64{1}, generations(t, root), "no checkpoint ran")
	require.NoError(t, h.Close())
	require.NoError(t, f.Close())
	require.NoError(t, j.Close())
}
