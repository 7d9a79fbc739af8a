package client

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// commitAll commits the offsets of billing (three) and of audit (one).
func commitAll(t *testing.T, s *OffsetStore) {
	t.Helper()
	require.NoError(t, s.Commit("billing", "orders", 0, 5))
	require.NoError(t, s.Commit("billing", "orders", 1, 7))
	require.NoError(t, s.Commit("billing", "payments", 0, 2))
	require.NoError(t, s.Commit("audit", "orders", 0, 9))
}

// deleteSteps is how many file-system operations deleting billing's
// offsets takes, after commitAll.
func deleteSteps(t *testing.T) int {
	t.Helper()
	counter := logtest.NewFaultFS(nil)
	s, err := OpenOffsetStoreWithOptions(filepath.Join(t.TempDir(), "offsets"), OffsetStoreOptions{FS: counter})
	require.NoError(t, err)
	commitAll(t, s)
	before := counter.Total()
	_, err = s.DeleteConsumer("billing")
	require.NoError(t, err)
	steps := counter.Total() - before
	require.Greater(t, steps, 3, "rename, fsync, removals, fsync")
	return steps
}

// DeleteConsumer removes every offset of one consumer and no other's; a
// commit afterwards starts afresh (the store forgot the directories it had
// made durable, so it makes them again).
func TestOffsetStoreDeleteConsumer(t *testing.T) {
	s, root := newStore(t)
	commitAll(t, s)

	n, err := s.DeleteConsumer("billing")
	require.NoError(t, err)
	require.Equal(t, 3, n)
	list, err := s.List("billing")
	require.NoError(t, err)
	require.Empty(t, list)
	_, err = os.Stat(filepath.Join(root, "billing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(filepath.Join(root, deletedName("billing")))
	require.ErrorIs(t, err, os.ErrNotExist, "the renamed directory is removed")
	all, err := s.ListAll()
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, "audit", all[0].ConsumerID)

	require.NoError(t, s.Commit("billing", "orders", 0, 1), "a deleted consumer commits from scratch, lower too")
	off, ok, err := s.Load("billing", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(1), off)

	n, err = s.DeleteConsumer("nobody")
	require.NoError(t, err)
	require.Zero(t, n)
	_, err = s.DeleteConsumer("..")
	require.ErrorIs(t, err, topic.ErrInvalidName)
}

// A renamed directory left by an interrupted delete is invisible to
// readers, and removed by the next delete or the next open of the store.
func TestOffsetStoreDeleteSweepsLeftovers(t *testing.T) {
	s, root := newStore(t)
	commitAll(t, s)
	require.NoError(t, os.Rename(filepath.Join(root, "audit"), filepath.Join(root, deletedName("audit"))))
	all, err := s.ListAll()
	require.NoError(t, err)
	for _, o := range all {
		require.Equal(t, "billing", o.ConsumerID)
	}
	_, err = s.DeleteConsumer("billing")
	require.NoError(t, err)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries)

	require.NoError(t, s.Commit("audit2", "orders", 0, 9))
	require.NoError(t, os.Rename(filepath.Join(root, "audit2"), filepath.Join(root, deletedName("audit2"))))
	_, err = OpenOffsetStore(root)
	require.NoError(t, err)
	entries, err = os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries, "opening the store removes the leftover")
}

// A consumer id of the longest length (249 bytes, topic.MaxNameLength)
// deletes like any other: the renamed directory's name has a fixed length,
// within the 255 bytes a file name may have. Deleting ids that name
// nothing leaves nothing behind in the store, not even a lock.
func TestOffsetStoreDeleteLongestID(t *testing.T) {
	s, root := newStore(t)
	id := strings.Repeat("g", topic.MaxNameLength)
	require.NoError(t, s.Commit(id, "orders", 0, 5))
	n, err := s.DeleteConsumer(id)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries)

	locks := len(s.consumers)
	for i := range 50 {
		n, err := s.DeleteConsumer(fmt.Sprintf("nobody-%d", i))
		require.NoError(t, err)
		require.Zero(t, n)
	}
	require.Len(t, s.consumers, locks, "no lock for an id that has no offsets")
}

// Each file-system step of a delete failing in turn (the rename, the
// fsync of the offsets directory, the removal of a file or directory, the
// last fsync): the delete either changes nothing and says so, or deletes
// every offset of the consumer (ErrDeleteUnfinished when its renamed
// directory could not be removed). A failed fsync of the offsets directory
// leaves the consumer's entries in doubt, so the store refuses its commits
// until reopened. Reopened, the store lists all the consumer's offsets or
// none, the other consumer's always, and no leftover directory.
func TestOffsetStoreDeleteFaultAtEveryStep(t *testing.T) {
	steps := deleteSteps(t)
	for n := 1; n <= steps; n++ {
		t.Run(fmt.Sprintf("step %d fails", n), func(t *testing.T) {
			ffs := logtest.NewFaultFS(nil)
			root := filepath.Join(t.TempDir(), "offsets")
			s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
			require.NoError(t, err)
			commitAll(t, s)
			seen := 0
			var failed logtest.Op
			ffs.SetFault(func(op logtest.Op, _ string) error {
				if seen++; seen == n {
					failed = op
					return logtest.ErrInjected
				}
				return nil
			})
			deleted, err := s.DeleteConsumer("billing")
			ffs.SetFault(nil)
			require.ErrorIs(t, err, logtest.ErrInjected, "the %s failed", failed)
			list, lerr := s.List("billing")
			require.NoError(t, lerr)
			switch {
			case errors.Is(err, ErrDeleteUnfinished):
				require.Equal(t, 3, deleted)
				require.Empty(t, list, "the offsets are deleted; only their renamed directory is left")
			case failed == logtest.OpSyncDir && len(list) == 0:
				require.ErrorIs(t, s.Commit("billing", "orders", 0, 1), ErrStoreFailed, "the rename is in doubt")
			default:
				require.Zero(t, deleted)
				require.Len(t, list, 3, "a delete that failed changed nothing")
				require.NoError(t, s.Commit("billing", "orders", 0, 6))
			}

			reopened, err := OpenOffsetStore(root)
			require.NoError(t, err)
			billing, err := reopened.List("billing")
			require.NoError(t, err)
			require.Contains(t, []int{0, 3}, len(billing), "all or nothing")
			audit, err := reopened.List("audit")
			require.NoError(t, err)
			require.Len(t, audit, 1)
			entries, err := os.ReadDir(root)
			require.NoError(t, err)
			for _, e := range entries {
				require.False(t, isDeletedName(e.Name()), "the leftover is swept at open")
			}
		})
	}
}

// docs/design.md § Sticky failure: after a failed write the store refuses
// to delete the consumer's offsets, as it refuses to commit them.
func TestOffsetStoreDeleteRefusedAfterFailure(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	s, err := OpenOffsetStoreWithOptions(filepath.Join(t.TempDir(), "offsets"), OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	require.NoError(t, s.Commit("billing", "orders", 0, 5))
	ffs.SetFault(func(op logtest.Op, _ string) error {
		if op == logtest.OpSyncDir {
			return errors.New("injected")
		}
		return nil
	})
	require.Error(t, s.Commit("billing", "orders", 0, 6))
	ffs.SetFault(nil)
	_, err = s.DeleteConsumer("billing")
	require.ErrorIs(t, err, ErrStoreFailed)
}

// Deleting a consumer's offsets is all or nothing under a power loss
// before any of its file-system steps: the crashed store lists every
// offset of the consumer or none, the other consumer's always, and once
// DeleteConsumer returned, none. Another delete in the crashed store
// finishes the job.
func TestCrashSimDeleteConsumerAtEveryStep(t *testing.T) {
	steps := deleteSteps(t)
	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprintf("before step %d", n), func(t *testing.T) {
			base := t.TempDir()
			c, err := logtest.NewCrashFS(base)
			require.NoError(t, err)
			ffs := logtest.NewFaultFS(c)
			root := filepath.Join(base, "offsets")
			s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
			require.NoError(t, err)
			commitAll(t, s)
			dst := filepath.Join(t.TempDir(), "crashed")
			seen, crashed := 0, false
			ffs.SetFault(func(logtest.Op, string) error {
				seen++
				if seen == n {
					crashed = true
					require.NoError(t, c.Crash(dst))
				}
				return nil
			})
			_, err = s.DeleteConsumer("billing")
			require.NoError(t, err)
			if !crashed {
				require.NoError(t, c.Crash(dst))
			}

			crashedStore, err := OpenOffsetStoreWithOptions(filepath.Join(dst, "offsets"), OffsetStoreOptions{FS: durable.OS})
			require.NoError(t, err)
			billing, err := crashedStore.List("billing")
			require.NoError(t, err)
			require.Contains(t, []int{0, 3}, len(billing), "all or nothing")
			if !crashed {
				require.Empty(t, billing, "a returned delete survives")
			}
			audit, err := crashedStore.List("audit")
			require.NoError(t, err)
			require.Len(t, audit, 1)

			_, err = crashedStore.DeleteConsumer("billing")
			require.NoError(t, err)
			entries, err := os.ReadDir(filepath.Join(dst, "offsets"))
			require.NoError(t, err)
			require.Len(t, entries, 1, "only audit is left")
		})
	}
}

// DeleteOffset removes one partition's offset and no other, survives a
// reopen of the store as gone, and a commit afterwards starts afresh.
func TestOffsetStoreDeleteOffset(t *testing.T) {
	s, root := newStore(t)
	commitAll(t, s)

	ok, err := s.DeleteOffset("billing", "orders", 1)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.DeleteOffset("billing", "orders", 1)
	require.NoError(t, err)
	require.False(t, ok, "deleted already")
	ok, err = s.DeleteOffset("nobody", "orders", 0)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = s.DeleteOffset("billing", "..", 0)
	require.ErrorIs(t, err, topic.ErrInvalidName)

	reopened, err := OpenOffsetStore(root)
	require.NoError(t, err)
	list, err := reopened.List("billing")
	require.NoError(t, err)
	require.Equal(t, []CommittedOffset{{Topic: "orders", Partition: 0, Offset: 5}, {Topic: "payments", Partition: 0, Offset: 2}}, list)
	_, ok, err = reopened.Load("billing", "orders", 1)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, reopened.Commit("billing", "orders", 1, 3), "a deleted offset commits from scratch, lower too")
	off, ok, err := reopened.Load("billing", "orders", 1)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(3), off)
}

// A failed fsync after the removal fails the store for the consumer, as a
// failed commit does.
func TestOffsetStoreDeleteOffsetSyncFails(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	s, err := OpenOffsetStoreWithOptions(filepath.Join(t.TempDir(), "offsets"), OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	commitAll(t, s)
	ffs.SetFault(func(op logtest.Op, _ string) error {
		if op == logtest.OpSyncDir {
			return logtest.ErrInjected // the removal succeeds, its fsync fails
		}
		return nil
	})
	_, err = s.DeleteOffset("billing", "orders", 0)
	ffs.SetFault(nil)
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.ErrorIs(t, s.Commit("billing", "orders", 0, 9), ErrStoreFailed)
}
