package client_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// Reset is the operator's explicit reset: it moves a committed offset
// backwards (or forwards), and a consumer created afterwards resumes there.
// Commit keeps refusing to go below the reset value.
func TestResetMovesCommittedOffsetBackwards(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 10)
	offsets := filepath.Join(dir, "offsets")
	s := specStore(t, offsets)
	require.NoError(t, s.Commit("w", "orders", 0, 8))

	require.NoError(t, s.Reset("w", "orders", 0, 2))
	raw, err := os.ReadFile(specOffsetPath(offsets, "w", "orders", 0))
	require.NoError(t, err)
	require.Equal(t, "{\"version\": 1, \"offset\": 2}\n", string(raw))

	c := specConsumer(t, tp, specStore(t, offsets), "w")
	require.Equal(t, uint64(2), c.Position())
	off, ok := c.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(2), off)
	recs, err := c.Fetch(1)
	require.NoError(t, err)
	require.Equal(t, "r2", string(recs[0].Payload), "records after the reset point are delivered again")

	// The reset value is now durable progress: Commit may not go below it.
	var re *client.OffsetRegressionError
	require.ErrorAs(t, s.Commit("w", "orders", 0, 1), &re)
	require.Equal(t, uint64(2), re.Committed)
	require.NoError(t, s.Commit("w", "orders", 0, 3))

	// Forwards is allowed too.
	require.NoError(t, s.Reset("w", "orders", 0, 9))
	off, ok, err = s.Load("w", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(9), off)
}

// Resetting a consumer that never committed records a real committed
// offset (ok true afterwards), 0 included.
func TestResetWithoutEarlierCommit(t *testing.T) {
	offsets := t.TempDir()
	s := specStore(t, offsets)
	require.NoError(t, s.Reset("w", "orders", 3, 0))
	off, ok, err := specStore(t, offsets).Load("w", "orders", 3)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(0), off)
}

// Resetting to the committed offset writes nothing.
func TestResetToCommittedOffsetWritesNothing(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	s, err := client.OpenOffsetStoreWithOptions(t.TempDir(), client.OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	require.NoError(t, s.Commit("w", "orders", 0, 4))
	renames := ffs.Count(logtest.OpRename)
	require.NoError(t, s.Reset("w", "orders", 0, 4))
	require.Equal(t, renames, ffs.Count(logtest.OpRename))
}

// Reset refuses to overwrite a damaged offset file, exactly like Commit:
// the *OffsetCorruptionError names the file and its bytes stay as they
// were, so an operator looks at the damage before anything replaces it.
func TestResetRefusesCorruptFile(t *testing.T) {
	for _, tc := range specBadOffsetFiles {
		t.Run(tc.name, func(t *testing.T) {
			offsets := t.TempDir()
			path := specOffsetPath(offsets, "w", "orders", 0)
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			before := specSnapshot(t, offsets)

			var ce *client.OffsetCorruptionError
			err := specStore(t, offsets).Reset("w", "orders", 0, 0)
			require.ErrorAs(t, err, &ce)
			require.Equal(t, path, ce.Path)
			require.Equal(t, before, specSnapshot(t, offsets))
		})
	}
}

// Reset validates consumer ids, topic names and the partition before any
// path is built: bad input is refused and nothing is created.
func TestResetRejectsBadInput(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", "../x", "/abs", "a b"} {
		parent := t.TempDir()
		s := specStore(t, filepath.Join(parent, "offsets"))
		require.ErrorIs(t, s.Reset(name, "orders", 0, 1), topic.ErrInvalidName, "id %q", name)
		require.ErrorIs(t, s.Reset("w", name, 0, 1), topic.ErrInvalidName, "topic %q", name)
		require.ErrorIs(t, s.Reset("w", "orders", -1, 1), topic.ErrPartitionOutOfRange)
		require.NoDirExists(t, filepath.Join(parent, "offsets"))
	}
}

// A reset whose write fails at any step leaves the old offset or the new
// one, never a torn value, and the failure is sticky for Reset and Commit
// alike; a failed Commit makes Reset refuse too.
func TestResetFailedWriteIsAtomicAndSticky(t *testing.T) {
	ops := []logtest.Op{logtest.OpWrite, logtest.OpSync, logtest.OpClose, logtest.OpRename, logtest.OpSyncDir}
	for _, op := range ops {
		t.Run(string(op), func(t *testing.T) {
			offsets := t.TempDir()
			ffs := logtest.NewFaultFS(nil)
			s, err := client.OpenOffsetStoreWithOptions(offsets, client.OffsetStoreOptions{FS: ffs})
			require.NoError(t, err)
			require.NoError(t, s.Commit("w", "orders", 0, 7))

			ffs.SetFault(func(o logtest.Op, path string) error {
				// The read of the old value closes a file too; fail only
				// the temp file's close.
				if o == op && (op != logtest.OpClose || strings.HasSuffix(path, ".tmp")) {
					return logtest.ErrInjected
				}
				return nil
			})
			require.ErrorIs(t, s.Reset("w", "orders", 0, 1), logtest.ErrInjected)
			ffs.SetFault(nil)

			off, ok, err := specStore(t, offsets).Load("w", "orders", 0)
			require.NoError(t, err)
			require.True(t, ok)
			if op == logtest.OpSyncDir {
				require.Contains(t, []uint64{1, 7}, off, "the rename happened; only its durability is unknown")
			} else {
				require.Equal(t, uint64(7), off)
			}
			require.ErrorIs(t, s.Reset("w", "orders", 0, 2), client.ErrStoreFailed)
			require.ErrorIs(t, s.Commit("w", "orders", 0, 9), client.ErrStoreFailed)
			require.NoError(t, specStore(t, offsets).Reset("w", "orders", 0, 3), "a reopened store works")
		})
	}

	ffs := logtest.NewFaultFS(nil)
	s, err := client.OpenOffsetStoreWithOptions(t.TempDir(), client.OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	ffs.SetFault(logtest.FailNth(logtest.OpSync, 1))
	require.Error(t, s.Commit("w", "orders", 0, 5))
	ffs.SetFault(nil)
	require.ErrorIs(t, s.Reset("w", "orders", 0, 0), client.ErrStoreFailed)
}

// Reset takes the same per-file lock as Commit: run together from many
// goroutines under -race, every call either succeeds or is a clean
// regression refusal, and the file always holds a whole, valid offset.
func TestResetConcurrentWithCommits(t *testing.T) {
	offsets := t.TempDir()
	s := specStore(t, offsets)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				var err error
				if g == 0 && i%5 == 0 {
					err = s.Reset("w", "orders", 0, uint64(i))
				} else {
					err = s.Commit("w", "orders", 0, uint64(i*4+g))
				}
				var re *client.OffsetRegressionError
				if err != nil && !errors.As(err, &re) {
					t.Error(err)
					return
				}
				if _, _, err := s.Load("w", "orders", 0); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	_, ok, err := specStore(t, offsets).Load("w", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok)
}

// An operator rewinds a consumer to replay a partition from offset 1.
func ExampleOffsetStore_Reset() {
	dir, err := os.MkdirTemp("", "pystream-reset-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	store, err := client.OpenOffsetStore(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := store.Commit("analytics-worker", "orders", 0, 5); err != nil {
		fmt.Println(err)
		return
	}
	var regression *client.OffsetRegressionError
	fmt.Println("commit 1 refused:", errors.As(store.Commit("analytics-worker", "orders", 0, 1), &regression))
	if err := store.Reset("analytics-worker", "orders", 0, 1); err != nil {
		fmt.Println(err)
		return
	}
	off, ok, err := store.Load("analytics-worker", "orders", 0)
	fmt.Println(off, ok, err)
	// Output:
	// commit 1 refused: true
	// 1 true <nil>
}
