package client

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// crashLoad crashes c (rooted where the store's root is <root>/offsets) and
// loads one offset of topic "orders" from the crashed copy.
func crashLoad(t *testing.T, c *logtest.CrashFS, consumerID string, partition int) (uint64, bool) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "crashed")
	require.NoError(t, c.Crash(dst))
	crashed, err := OpenOffsetStore(filepath.Join(dst, "offsets"))
	require.NoError(t, err)
	off, ok, err := crashed.Load(consumerID, "orders", partition)
	require.NoError(t, err)
	return off, ok
}

// docs/phase-3-clients.md § Offset files (a committed offset survives a
// restart), under a simulated power loss: once Commit returns for a consumer
// that never committed before (so the store root and the consumer's
// directories are all new), a crash keeps the offset; a later commit that
// returned replaces it; the second consumer's commit survives beside the
// first.
func TestCrashSimCommitSurvives(t *testing.T) {
	base := t.TempDir()
	c, err := logtest.NewCrashFS(base)
	require.NoError(t, err)
	root := filepath.Join(base, "offsets")
	s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: c})
	require.NoError(t, err)

	require.NoError(t, s.Commit("analytics-worker", "orders", 2, 41))
	off, ok := crashLoad(t, c, "analytics-worker", 2)
	require.True(t, ok, "a returned commit survives the crash")
	require.Equal(t, uint64(41), off)

	require.NoError(t, s.Commit("analytics-worker", "orders", 2, 97))
	off, ok = crashLoad(t, c, "analytics-worker", 2)
	require.True(t, ok)
	require.Equal(t, uint64(97), off)

	require.NoError(t, s.Commit("billing", "orders", 0, 5))
	off, ok = crashLoad(t, c, "billing", 0)
	require.True(t, ok)
	require.Equal(t, uint64(5), off)
	off, ok = crashLoad(t, c, "analytics-worker", 2)
	require.True(t, ok)
	require.Equal(t, uint64(97), off)
}

// docs/phase-3-clients.md § Offset files (an offset file is replaced
// atomically, never torn), under a simulated power loss before each
// file-system operation of a commit in turn: the crashed store loads the
// previous offset (or nothing, for the first commit) or the new one, never an
// error.
func TestCrashSimCommitAtEveryStep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		prior []uint64 // committed before the crashing commit
		next  uint64
	}{
		{name: "first commit", next: 41},
		{name: "replacing commit", prior: []uint64{41}, next: 97},
	} {
		counter := logtest.NewFaultFS(nil)
		s, err := OpenOffsetStoreWithOptions(filepath.Join(t.TempDir(), "offsets"), OffsetStoreOptions{FS: counter})
		require.NoError(t, err)
		countSteps := func() int {
			n := 0
			for _, op := range []logtest.Op{logtest.OpOpen, logtest.OpWrite, logtest.OpSync, logtest.OpRename, logtest.OpRemove, logtest.OpMkdir, logtest.OpSyncDir, logtest.OpClose} {
				n += counter.Count(op)
			}
			return n
		}
		for _, off := range tc.prior {
			require.NoError(t, s.Commit("analytics-worker", "orders", 2, off))
		}
		priorSteps := countSteps()
		require.NoError(t, s.Commit("analytics-worker", "orders", 2, tc.next))
		steps := countSteps()
		require.Greater(t, steps, priorSteps)

		for n := 1; n <= steps; n++ {
			t.Run(fmt.Sprintf("%s/before step %d", tc.name, n), func(t *testing.T) {
				base := t.TempDir()
				c, err := logtest.NewCrashFS(base)
				require.NoError(t, err)
				dst := filepath.Join(t.TempDir(), "crashed")
				crashed := false
				seen := 0
				ffs := logtest.NewFaultFS(c)
				s, err := OpenOffsetStoreWithOptions(filepath.Join(base, "offsets"), OffsetStoreOptions{FS: ffs})
				require.NoError(t, err)
				ffs.SetFault(func(logtest.Op, string) error {
					seen++
					if seen == n {
						crashed = true
						require.NoError(t, c.Crash(dst))
					}
					return nil
				})
				for _, off := range append(tc.prior, tc.next) {
					require.NoError(t, s.Commit("analytics-worker", "orders", 2, off))
				}
				require.Equal(t, steps, seen, "the run takes the steps counted")
				require.True(t, crashed)
				store, err := OpenOffsetStore(filepath.Join(dst, "offsets"))
				require.NoError(t, err)
				off, ok, err := store.Load("analytics-worker", "orders", 2)
				require.NoError(t, err, "crash before step %d", n)
				if n > priorSteps && len(tc.prior) > 0 {
					require.True(t, ok, "an earlier commit that returned survives")
				}
				if ok {
					require.Contains(t, append(tc.prior, tc.next), off)
				}
			})
		}
	}
}

// docs/phase-3-clients.md § Offset files (a committed offset survives a
// restart), after a process crash and then a power loss: a first life commits
// twice and is killed before each of its file-system operations in turn,
// leaving what it wrote in the page cache. A second life loads the offset and
// acknowledges it, committing it again through the store or through a
// Consumer (both no-ops when the offset is unchanged), or commits a first
// offset when it finds none; then the power fails. The crashed store must
// load exactly what the second life acknowledged.
func TestCrashSimCommitRestartAfterProcessCrash(t *testing.T) {
	const consumerID, partition = "analytics-worker", 2
	firstLife := func(fsys durable.FS, root string) {
		s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: fsys})
		if err != nil {
			return
		}
		if err := s.Commit(consumerID, "orders", partition, 41); err == nil {
			_ = s.Commit(consumerID, "orders", partition, 97)
		}
	}
	counter := logtest.NewFaultFS(nil)
	firstLife(counter, filepath.Join(t.TempDir(), "offsets"))
	steps := counter.Total()
	require.Greater(t, steps, 10)
	// The Consumer only needs the topic's name and partition count.
	tp, err := topic.Open(t.TempDir(), "orders", partition+1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tp.Close() })

	for _, via := range []string{"store", "consumer"} {
		for n := 1; n <= steps+1; n++ {
			t.Run(fmt.Sprintf("%s/dies before step %d", via, n), func(t *testing.T) {
				base := t.TempDir()
				root := filepath.Join(base, "offsets")
				c, err := logtest.KillBefore(base, n, func(fsys durable.FS) { firstLife(fsys, root) })
				require.NoError(t, err)

				s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: c})
				require.NoError(t, err, "the second life opens what the first left")
				var acked uint64
				switch via {
				case "store":
					off, ok, err := s.Load(consumerID, "orders", partition)
					require.NoError(t, err)
					acked = off
					if !ok {
						acked = 5
					}
					require.NoError(t, s.Commit(consumerID, "orders", partition, acked))
				case "consumer":
					cons, err := NewConsumer(ConsumerConfig{ID: consumerID, Topic: tp, Partition: partition, Offsets: s})
					require.NoError(t, err)
					require.NoError(t, cons.Commit())
					acked = cons.Position()
				}

				off, ok := crashLoad(t, c, consumerID, partition)
				require.True(t, ok, "the commit the second life acknowledged survives")
				require.Equal(t, acked, off)
			})
		}
	}
}
