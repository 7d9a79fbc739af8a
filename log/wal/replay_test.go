package wal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/wal"
)

// write is one journaled write, for building generation files by hand.
type write struct {
	rel  string
	pos  int64
	data string
}

// writeGeneration puts generation gen's file under root, its entries the
// writes, followed by tail (the zeros a generation is filled with, or a
// torn entry).
func writeGeneration(t *testing.T, root string, gen uint64, writes []write, tail []byte) string {
	t.Helper()
	b := wal.AppendHeader(nil, gen)
	for _, w := range writes {
		b = wal.AppendEntry(b, w.rel, w.pos, []byte(w.data))
	}
	b = append(b, tail...)
	dir := filepath.Join(root, wal.DirName)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	name := filepath.Join(dir, wal.GenerationFileName(gen))
	require.NoError(t, os.WriteFile(name, b, 0o644))
	return name
}

// makeFile creates root/rel holding data.
func makeFile(t *testing.T, root, rel, data string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	return p
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// walDir lists the names in root/wal, sorted.
func walDir(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, wal.DirName))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// asides are the names in root/wal a replay set aside.
func asides(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, n := range walDir(t, root) {
		if strings.Contains(n, wal.AsideSuffix) {
			out = append(out, n)
		}
	}
	return out
}

// generations are the generation numbers of the files in root/wal.
func generations(t *testing.T, root string) []uint64 {
	t.Helper()
	var out []uint64
	for _, n := range walDir(t, root) {
		if g, ok := wal.ParseGenerationFileName(n); ok {
			out = append(out, g)
		}
	}
	return out
}

func openJournal(t *testing.T, fsys durable.FS, root string, opts wal.Options) *wal.FS {
	t.Helper()
	if opts.Journaled == nil {
		opts.Journaled = journaledLogs
	}
	var logged []string
	if opts.Logf == nil {
		opts.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
		t.Cleanup(func() {
			for _, l := range logged {
				t.Log(l)
			}
		})
	}
	j, err := wal.Open(fsys, root, opts)
	require.NoError(t, err)
	return j
}

// TestReplayOldestFirst replays three generations, given out of order on
// disk, into two files: a later write to the same bytes wins.
func TestReplayOldestFirst(t *testing.T) {
	root := t.TempDir()
	a := makeFile(t, root, "a/log.bin", "")
	b := makeFile(t, root, "b/log.bin", "0123456789")
	writeGeneration(t, root, 7, []write{{"a/log.bin", 0, "gen7gen7"}, {"b/log.bin", 2, "77"}}, make([]byte, 100))
	writeGeneration(t, root, 5, []write{{"a/log.bin", 0, "gen5gen5gen5"}, {"b/log.bin", 8, "55"}}, make([]byte, 100))
	writeGeneration(t, root, 6, []write{{"a/log.bin", 4, "six"}, {"b/log.bin", 2, "66"}}, nil)

	j := openJournal(t, durable.OS, root, wal.Options{})
	require.Equal(t, "gen7gen7gen5", readString(t, a), "5 then 6 then 7")
	require.Equal(t, "0177456755", readString(t, b))
	require.Empty(t, asides(t, root), "zeros after the last entry, or no tail at all, end a generation cleanly")
	require.Equal(t, []uint64{8}, generations(t, root), "replayed generations are removed; the new one follows the newest")
	require.NoError(t, j.Close())
	require.Empty(t, walDir(t, root))
}

// TestReplayZeroTail: a generation filled with zeros past its entries,
// as the journal writes them, replays whole and is removed.
func TestReplayZeroTail(t *testing.T) {
	root := t.TempDir()
	p := makeFile(t, root, "p/log.bin", "")
	writeGeneration(t, root, 1, []write{{"p/log.bin", 0, "abc"}, {"p/log.bin", 3, "def"}}, make([]byte, 4<<10))
	j := openJournal(t, durable.OS, root, wal.Options{})
	require.Equal(t, "abcdef", readString(t, p))
	require.Empty(t, asides(t, root))
	require.Equal(t, []uint64{2}, generations(t, root))
	require.NoError(t, j.Close())
}

// TestReplayTornEntry: the entries before a torn last one are replayed,
// the generation is kept aside, and the next generation is numbered above
// it, even once the aside file is the only one left.
func TestReplayTornEntry(t *testing.T) {
	root := t.TempDir()
	p := makeFile(t, root, "p/log.bin", "")
	torn := wal.AppendEntry(nil, "p/log.bin", 6, []byte("lost write"))
	torn = torn[:len(torn)-3]
	writeGeneration(t, root, 3, []write{{"p/log.bin", 0, "abc"}, {"p/log.bin", 3, "def"}}, append(torn, make([]byte, 64)...))

	j := openJournal(t, durable.OS, root, wal.Options{})
	require.Equal(t, "abcdef", readString(t, p), "the entries before the torn one are replayed, the torn one is not")
	aside := asides(t, root)
	require.Len(t, aside, 1)
	require.True(t, strings.HasPrefix(aside[0], wal.GenerationFileName(3)+wal.AsideSuffix), aside[0])
	ns := strings.TrimPrefix(aside[0], wal.GenerationFileName(3)+wal.AsideSuffix)
	require.Regexp(t, `^[0-9]+$`, ns)
	require.Equal(t, []uint64{4}, generations(t, root))
	require.NoError(t, j.Close())
	require.Equal(t, aside, walDir(t, root), "Close removes its generations, never an aside file")

	// Opened again, only the aside file is there: the new generation still
	// comes after it, and the aside file is not replayed again.
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	j = openJournal(t, durable.OS, root, wal.Options{})
	require.Equal(t, []uint64{4}, generations(t, root))
	require.Empty(t, readString(t, p), "an aside file is never replayed")
	require.Equal(t, aside, asides(t, root))
	require.NoError(t, j.Close())
}

// TestReplayDamagedHeader: a generation whose header is not the
// journal's is kept aside, nothing of it replayed.
func TestReplayDamagedHeader(t *testing.T) {
	root := t.TempDir()
	p := makeFile(t, root, "p/log.bin", "")
	name := writeGeneration(t, root, 2, []write{{"p/log.bin", 0, "abc"}}, nil)
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(name, append(wal.AppendHeader(nil, 9), b[wal.HeaderSize:]...), 0o644))
	j := openJournal(t, durable.OS, root, wal.Options{})
	require.Empty(t, readString(t, p))
	require.Len(t, asides(t, root), 1)
	require.Equal(t, []uint64{3}, generations(t, root))
	require.NoError(t, j.Close())
}

// TestReplayMissingFile: an entry naming a file that no longer exists is
// skipped, the others are replayed, and the generation is kept aside.
func TestReplayMissingFile(t *testing.T) {
	root := t.TempDir()
	p := makeFile(t, root, "p/log.bin", "")
	writeGeneration(t, root, 1, []write{{"p/log.bin", 0, "abc"}, {"gone/log.bin", 0, "xyz"}, {"p/log.bin", 3, "def"}}, nil)
	j := openJournal(t, durable.OS, root, wal.Options{})
	require.Equal(t, "abcdef", readString(t, p))
	_, err := os.Stat(filepath.Join(root, "gone", "log.bin"))
	require.ErrorIs(t, err, os.ErrNotExist, "replay never creates a file")
	require.Len(t, asides(t, root), 1)
	require.Equal(t, []uint64{2}, generations(t, root))
	require.NoError(t, j.Close())
}

// TestReplayNotJournaled: an entry naming a path the predicate refuses
// stops the generation's replay there and keeps it aside; the later
// generations are still replayed.
func TestReplayNotJournaled(t *testing.T) {
	root := t.TempDir()
	p := makeFile(t, root, "p/log.bin", "")
	other := makeFile(t, root, "p/meta", "meta")
	writeGeneration(t, root, 1, []write{{"p/log.bin", 0, "abc"}, {"p/meta", 0, "XX"}, {"p/log.bin", 3, "def"}}, nil)
	writeGeneration(t, root, 2, []write{{"p/log.bin", 6, "ghi"}}, nil)
	j := openJournal(t, durable.OS, root, wal.Options{})
	require.Equal(t, "meta", readString(t, other), "a file the predicate refuses is never written")
	require.Equal(t, "abc\x00\x00\x00ghi", readString(t, p), "nothing of generation 1 after the refused entry")
	aside := asides(t, root)
	require.Len(t, aside, 1)
	require.True(t, strings.HasPrefix(aside[0], wal.GenerationFileName(1)), aside[0])
	require.Equal(t, []uint64{3}, generations(t, root))
	require.NoError(t, j.Close())
}

// TestReplayWithoutOpen: Replay brings the journal's writes back and
// leaves no generation file, nor starts one.
func TestReplayWithoutOpen(t *testing.T) {
	root := t.TempDir()
	p := makeFile(t, root, "p/log.bin", "")
	writeGeneration(t, root, 1, []write{{"p/log.bin", 0, "abc"}}, make([]byte, 32))
	writeGeneration(t, root, 2, []write{{"p/log.bin", 1, "X"}}, nil)
	require.NoError(t, wal.Replay(durable.OS, root, wal.Options{Journaled: journaledLogs}))
	require.Equal(t, "aXc", readString(t, p))
	require.Empty(t, walDir(t, root))

	// Nothing to replay: no journal directory is needed, none is made.
	empty := t.TempDir()
	require.NoError(t, wal.Replay(durable.OS, empty, wal.Options{Journaled: journaledLogs}))
	_, err := os.Stat(filepath.Join(empty, wal.DirName))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestReplayAllZeroGeneration: a generation that holds only zeros, even
// past a header's length, is a creation a crash cut short (a file system
// may keep a size whose data never reached the disk): replay removes it,
// setting nothing aside.
func TestReplayAllZeroGeneration(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, wal.DirName), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, wal.DirName, wal.GenerationFileName(3)), make([]byte, 4096), 0o644))
	require.NoError(t, wal.Replay(durable.OS, root, wal.Options{Journaled: journaledLogs}))
	require.Empty(t, walDir(t, root))
}
