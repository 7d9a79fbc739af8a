package client

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
	"github.com/stretchr/testify/require"
)

func newStore(t *testing.T) (*OffsetStore, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "offsets")
	s, err := OpenOffsetStore(root)
	require.NoError(t, err)
	return s, root
}

// docs/design.md § Offset files: one file per consumer, topic and partition,
// holding {"version": 1, "offset": N}; nothing committed is distinct from a
// committed 0.
func TestOffsetStoreLayoutAndContent(t *testing.T) {
	s, root := newStore(t)
	_, ok, err := s.Load("analytics-worker", "orders", 0)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoDirExists(t, root, "Open and Load create nothing")

	require.NoError(t, s.Commit("analytics-worker", "orders", 0, 0))
	off, ok, err := s.Load("analytics-worker", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok, "a committed 0 is not 'never committed'")
	require.Zero(t, off)

	require.NoError(t, s.Commit("analytics-worker", "orders", 1, 123))
	require.Equal(t, []string{
		"analytics-worker/",
		"analytics-worker/orders/",
		"analytics-worker/orders/partition-000000.offset",
		"analytics-worker/orders/partition-000001.offset",
	}, tree(t, root))
	require.Equal(t, "{\"version\": 1, \"offset\": 123}\n", string(readBytes(t, filepath.Join(root, "analytics-worker", "orders", "partition-000001.offset"))))

	// Reopening the store finds the offsets.
	s2, err := OpenOffsetStore(root)
	require.NoError(t, err)
	off, ok, err = s2.Load("analytics-worker", "orders", 1)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(123), off)
}

// docs/phase-3-clients.md § Seek and replay: committing from a position below
// what is stored raises OffsetRegressionError; the file keeps its bytes.
// Equal is a no-op.
func TestOffsetStoreRegressionLeavesFileUnchanged(t *testing.T) {
	s, root := newStore(t)
	require.NoError(t, s.Commit("c", "t", 0, 10))
	path := filepath.Join(root, "c", "t", OffsetFileName(0))
	before := readBytes(t, path)

	err := s.Commit("c", "t", 0, 9)
	var re *OffsetRegressionError
	require.ErrorAs(t, err, &re)
	require.Equal(t, OffsetRegressionError{ConsumerID: "c", Topic: "t", Partition: 0, Committed: 10, Requested: 9}, *re)
	require.Equal(t, before, readBytes(t, path))

	require.NoError(t, s.Commit("c", "t", 0, 10))
	require.NoError(t, s.Commit("c", "t", 0, 11))
	off, _, err := s.Load("c", "t", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(11), off)
}

// docs/design.md § Names: consumer ids and topic names follow the topic rules
// and are checked before any path is built; nothing is created.
func TestOffsetStoreInvalidNamesCreateNothing(t *testing.T) {
	s, root := newStore(t)
	bad := []string{"", ".", "..", "a/b", "../x", "/abs", "a b", strings.Repeat("x", 250)}
	for _, name := range bad {
		require.ErrorIs(t, s.Commit(name, "t", 0, 1), topic.ErrInvalidName, "consumer %q", name)
		require.ErrorIs(t, s.Commit("c", name, 0, 1), topic.ErrInvalidName, "topic %q", name)
		_, _, err := s.Load(name, "t", 0)
		require.ErrorIs(t, err, topic.ErrInvalidName)
		_, _, err = s.Load("c", name, 0)
		require.ErrorIs(t, err, topic.ErrInvalidName)
		_, err = s.List(name)
		require.ErrorIs(t, err, topic.ErrInvalidName)
	}
	require.ErrorIs(t, s.Commit("c", "t", -1, 1), topic.ErrPartitionOutOfRange)
	_, _, err := s.Load("c", "t", -1)
	require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
	require.NoDirExists(t, root)
	require.Empty(t, tree(t, filepath.Dir(root)), "nothing created beside root either")
}

// docs/design.md § Offset files and docs/design.md § Invariants, 3: malformed
// offset state raises OffsetCorruptionError and is never repaired or
// overwritten, by Load, by Commit or by a consumer.
func TestOffsetStoreMalformedFilesTable(t *testing.T) {
	cases := []struct{ name, data string }{
		{"empty", ""},
		{"bad JSON", `{"version": 1, "offset": 3`},
		{"not an object", `[1, 3]`},
		{"bare number", `3`},
		{"missing version", `{"offset": 3}`},
		{"missing offset", `{"version": 1}`},
		{"version as string", `{"version": "1", "offset": 3}`},
		{"unknown version", `{"version": 2, "offset": 3}`},
		{"version null", `{"version": null, "offset": 3}`},
		{"offset as string", `{"version": 1, "offset": "3"}`},
		{"offset null", `{"version": 1, "offset": null}`},
		{"offset float", `{"version": 1, "offset": 3.0}`},
		{"offset exponent", `{"version": 1, "offset": 3e2}`},
		{"offset bool", `{"version": 1, "offset": true}`},
		{"negative offset", `{"version": 1, "offset": -1}`},
		{"offset beyond uint64", `{"version": 1, "offset": 18446744073709551616}`},
		{"unknown field", `{"version": 1, "offset": 3, "group": "g"}`},
		{"duplicate field", `{"version": 1, "offset": 3, "offset": 4}`},
		{"trailing data", `{"version": 1, "offset": 3}{"version": 1, "offset": 4}`},
		{"trailing garbage", "{\"version\": 1, \"offset\": 3}\n\x00"},
		{"oversized", `{"version": 1, "offset": 3}` + strings.Repeat(" ", maxOffsetFileSize)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 1, 5)
			dir := filepath.Join(f.offsetRoot, "c", "orders")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			path := filepath.Join(dir, OffsetFileName(0))
			require.NoError(t, os.WriteFile(path, []byte(c.data), 0o644))

			var ce *OffsetCorruptionError
			_, _, err := f.store.Load("c", "orders", 0)
			require.ErrorAs(t, err, &ce)
			require.Equal(t, path, ce.Path)
			require.NotEmpty(t, ce.Reason)
			require.ErrorAs(t, f.store.Commit("c", "orders", 0, 4), &ce)
			_, err = f.store.List("c")
			require.ErrorAs(t, err, &ce)
			_, err = NewConsumer(ConsumerConfig{ID: "c", Topic: f.topic, Partition: 0, Offsets: f.store})
			require.ErrorAs(t, err, &ce)

			require.Equal(t, c.data, string(readBytes(t, path)), "bytes unchanged")
			require.Equal(t, []string{"c/", "c/orders/", "c/orders/partition-000000.offset"}, tree(t, f.offsetRoot))

			_, err = ParseOffsetFile([]byte(c.data))
			require.ErrorAs(t, err, &ce, "the pure parser refuses it alone")
			require.Empty(t, ce.Path)
		})
	}
}

// docs/phase-3-clients.md § Offset files and docs/design.md § Invariants, 2:
// a commit whose write fails at any step leaves the old offset readable, and
// the store then refuses further commits (sticky failure) until reopened.
func TestOffsetStoreFailedWriteKeepsOldOffset(t *testing.T) {
	ops := []logtest.Op{logtest.OpOpen, logtest.OpWrite, logtest.OpSync, logtest.OpClose, logtest.OpRename, logtest.OpSyncDir}
	for _, op := range ops {
		for _, fault := range []error{logtest.ErrInjected, logtest.ErrShortWrite} {
			if fault == logtest.ErrShortWrite && op != logtest.OpWrite {
				continue
			}
			t.Run(fmt.Sprintf("%s/%v", op, fault), func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "offsets")
				ffs := logtest.NewFaultFS(nil)
				s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
				require.NoError(t, err)
				require.NoError(t, s.Commit("c", "t", 0, 5))

				ffs.SetFault(func(o logtest.Op, path string) error {
					// Opens for reading the old value are not part of
					// the write; fail the temp file's open only.
					if o == op && (op != logtest.OpOpen || strings.HasSuffix(path, ".tmp")) {
						return fault
					}
					return nil
				})
				err = s.Commit("c", "t", 0, 9)
				require.Error(t, err)
				ffs.SetFault(nil)

				err = s.Commit("c", "t", 0, 10)
				require.ErrorIs(t, err, ErrStoreFailed, "sticky failure")
				require.ErrorIs(t, s.Commit("c", "other", 0, 1), ErrStoreFailed, "for every file of the consumer")
				require.NoError(t, s.Commit("d", "t", 0, 1), "another consumer keeps committing")

				fresh, err := OpenOffsetStore(root)
				require.NoError(t, err)
				off, ok, err := fresh.Load("c", "t", 0)
				require.NoError(t, err, "the file is never torn")
				require.True(t, ok)
				if op == logtest.OpSyncDir {
					// The rename happened; only its durability is unknown.
					require.Contains(t, []uint64{5, 9}, off)
				} else {
					require.Equal(t, uint64(5), off, "old offset readable")
				}
				require.NoError(t, fresh.Commit("c", "t", 0, 10), "a reopened store works")
			})
		}
	}
}

// Creating the directories of a first commit can fail too; the failure is
// sticky and nothing half-written is left to read.
func TestOffsetStoreFailedMkdir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "offsets")
	ffs := logtest.NewFaultFS(nil)
	ffs.SetFault(logtest.FailNth(logtest.OpMkdir, 2))
	s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	require.ErrorIs(t, s.Commit("c", "t", 0, 1), logtest.ErrInjected)
	require.ErrorIs(t, s.Commit("c", "t", 0, 1), ErrStoreFailed)
	_, ok, err := s.Load("c", "t", 0)
	require.NoError(t, err)
	require.False(t, ok)
}

// A leftover temp file from an interrupted commit is ignored by Load and
// List and replaced by the next commit.
func TestOffsetStoreLeftoverTempIgnored(t *testing.T) {
	s, root := newStore(t)
	require.NoError(t, s.Commit("c", "t", 0, 2))
	path := filepath.Join(root, "c", "t", OffsetFileName(0))
	require.NoError(t, os.WriteFile(path+".tmp", []byte(`{"vers`), 0o644))
	off, ok, err := s.Load("c", "t", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(2), off)
	list, err := s.List("c")
	require.NoError(t, err)
	require.Equal(t, []CommittedOffset{{Topic: "t", Partition: 0, Offset: 2}}, list)
	require.NoError(t, s.Commit("c", "t", 0, 3))
	require.NoFileExists(t, path+".tmp")
}

// List returns one consumer's committed offsets sorted by topic and
// partition, skipping foreign files.
func TestOffsetStoreList(t *testing.T) {
	s, root := newStore(t)
	list, err := s.List("nobody")
	require.NoError(t, err)
	require.Empty(t, list)

	require.NoError(t, s.Commit("w", "payments", 12, 7))
	require.NoError(t, s.Commit("w", "orders", 1, 3))
	require.NoError(t, s.Commit("w", "orders", 0, 0))
	require.NoError(t, s.Commit("other", "orders", 0, 99))
	require.NoError(t, os.WriteFile(filepath.Join(root, "w", "orders", "notes.txt"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "w", "orders", "partition-1.offset"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "w", "stray-file"), []byte("x"), 0o644))

	list, err = s.List("w")
	require.NoError(t, err)
	require.Equal(t, []CommittedOffset{
		{Topic: "orders", Partition: 0, Offset: 0},
		{Topic: "orders", Partition: 1, Offset: 3},
		{Topic: "payments", Partition: 12, Offset: 7},
	}, list)
}

// An offset found on disk may have been renamed into place by a process that
// died before syncing its directory, so a store fsyncs the directory before
// it returns the first offset read there
// (TestCrashSimCommitRestartAfterProcessCrash), and only then: later loads,
// no-op commits and commits into a directory the store has synced already,
// by reading or by committing, pay no new directory fsync. A failed sync
// is sticky.
func TestOffsetStoreSyncsFoundOffsetsOncePerDirectory(t *testing.T) {
	_, root := newStore(t)
	first, err := OpenOffsetStore(root)
	require.NoError(t, err)
	require.NoError(t, first.Commit("w", "orders", 0, 5))
	require.NoError(t, first.Commit("w", "orders", 1, 6))
	require.NoError(t, first.Commit("w", "payments", 0, 7))

	ffs := logtest.NewFaultFS(nil)
	s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	var synced []string
	ffs.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpSyncDir {
			synced = append(synced, path)
		}
		return nil
	})
	for range 3 {
		off, ok, err := s.Load("w", "orders", 0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, uint64(5), off)
		require.NoError(t, s.Commit("w", "orders", 0, 5), "a no-op commit")
		require.NoError(t, s.Commit("w", "orders", 1, 6), "a no-op commit")
	}
	orders := filepath.Join(root, "w", "orders")
	require.Equal(t, []string{orders}, synced, "once for the directory")

	synced = nil
	require.NoError(t, s.Commit("w", "orders", 0, 8))
	require.Equal(t, []string{filepath.Join(root, "w"), orders}, synced, "a commit's own syncs: the parent once per store, then the rename")
	synced = nil
	require.NoError(t, s.Commit("w", "orders", 0, 8), "a no-op commit")
	require.NoError(t, s.Commit("w", "orders", 0, 9))
	require.Equal(t, []string{orders}, synced, "only the rename's")

	synced = nil
	list, err := s.List("w")
	require.NoError(t, err)
	require.Len(t, list, 3)
	_, err = s.List("w")
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(root, "w", "payments")}, synced, "List syncs each directory it reads from the first time")

	// A failed sync fails the store, as a failed write does.
	ffs = logtest.NewFaultFS(nil)
	s, err = OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	ffs.SetFault(logtest.FailNth(logtest.OpSyncDir, 1))
	_, _, err = s.Load("w", "orders", 0)
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.ErrorIs(t, s.Commit("w", "orders", 0, 10), ErrStoreFailed)
}

func TestOffsetStoreFileNames(t *testing.T) {
	require.Equal(t, "partition-000000.offset", OffsetFileName(0))
	require.Equal(t, "partition-1234567.offset", OffsetFileName(1234567))
	for _, c := range []struct {
		name string
		p    int
		ok   bool
	}{
		{"partition-000000.offset", 0, true},
		{"partition-000042.offset", 42, true},
		{"partition-1234567.offset", 1234567, true},
		{"partition-42.offset", 0, false},
		{"partition-000042.offset.tmp", 0, false},
		{"partition--00001.offset", 0, false},
		{"partition-+00001.offset", 0, false},
		{"log.bin", 0, false},
	} {
		p, ok := ParseOffsetFileName(c.name)
		require.Equal(t, c.ok, ok, c.name)
		if ok {
			require.Equal(t, c.p, p)
		}
	}
}

// docs/phase-3-clients.md § Offset files and docs/design.md § Invariants, 5:
// concurrent commits to one file are serialized and the stored offset only
// ever grows: the final value is the largest committed, every losing commit
// is a regression error, and no commit of a larger value is lost.
func TestOffsetStoreConcurrentCommitsNeverRegress(t *testing.T) {
	s, _ := newStore(t)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				err := s.Commit("c", "t", g%2, uint64(i*8+g))
				var re *OffsetRegressionError
				if err != nil && !errors.As(err, &re) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for p, want := range []uint64{19*8 + 6, 19*8 + 7} {
		off, ok, err := s.Load("c", "t", p)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want, off)
	}
}

// The root must be a directory when it exists.
func TestOffsetStoreOpenValidation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := OpenOffsetStore(file)
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = OpenOffsetStore("")
	require.ErrorIs(t, err, ErrInvalidConfig)
}
