package log_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// scriptedSyncFS is a CrashFS whose syncs of the whole file system a test
// can hold and fail. While script is set, each SyncFS takes its outcome
// from it: nil syncs the CrashFS, an error fails the sync with nothing made
// durable. Otherwise every SyncFS goes straight to the CrashFS. It counts
// the SyncFS calls after the SyncGroup's probe.
type scriptedSyncFS struct {
	*logtest.CrashFS
	script atomic.Pointer[chan error]
	calls  atomic.Int64
}

func (s *scriptedSyncFS) SyncFS(f durable.File) error {
	s.calls.Add(1)
	if script := s.script.Load(); script != nil {
		if err := <-*script; err != nil {
			return err
		}
	}
	return s.CrashFS.SyncFS(f)
}

// sharedLogs opens n logs below the root of s, at log<i>/log.bin, all
// syncing through one SyncGroup over s.
func sharedLogs(t *testing.T, s *scriptedSyncFS, n int) ([]*log.Log, []string) {
	t.Helper()
	group, err := durable.NewSyncGroup(s, s.Root())
	require.NoError(t, err)
	require.True(t, group.Whole(), "CrashFS syncs as a whole")
	t.Cleanup(func() { require.NoError(t, group.Close()) })
	s.calls.Store(0)
	var logs []*log.Log
	var paths []string
	for i := range n {
		path := filepath.Join(s.Root(), fmt.Sprintf("log%d", i), log.FileName)
		l, err := log.OpenWithOptions(path, log.Options{FS: s, Sync: group.Sync})
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close() })
		logs = append(logs, l)
		paths = append(paths, path)
	}
	return logs, paths
}

// crashedPayloads crashes c into a fresh directory and returns the payloads
// of the crashed copy of each log, in offset order; the copy must open
// without corruption.
func crashedPayloads(t *testing.T, c *logtest.CrashFS, paths []string) [][]string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "crashed")
	require.NoError(t, c.Crash(dst))
	out := make([][]string, len(paths))
	for i, path := range paths {
		rel, err := filepath.Rel(c.Root(), path)
		require.NoError(t, err)
		l, err := log.Open(filepath.Join(dst, rel))
		require.NoError(t, err, "the crashed copy of %s opens cleanly", rel)
		recs, err := l.Read(0, int(l.NextOffset())+1)
		require.NoError(t, err)
		require.NoError(t, l.Close())
		for j, r := range recs {
			require.EqualValues(t, j, r.Offset)
			out[i] = append(out[i], string(r.Payload))
		}
	}
	return out
}

// TestCrashSharedSyncKeepsAcknowledgedAppends pins, under a simulated power
// loss, docs/design.md § One sync for many partitions: logs that share syncs
// of the file system through a durable.SyncGroup, appended to concurrently,
// keep after a crash at any moment every record acknowledged before it, in
// order, and nothing that was never appended.
func TestCrashSharedSyncKeepsAcknowledgedAppends(t *testing.T) {
	const nlogs, writers, perWriter = 3, 2, 40
	c, err := logtest.NewCrashFS(t.TempDir())
	require.NoError(t, err)
	s := &scriptedSyncFS{CrashFS: c}
	logs, paths := sharedLogs(t, s, nlogs)

	// acked[i] holds log i's acknowledged payloads by offset.
	var mu sync.Mutex
	acked := make([]map[uint64]string, nlogs)
	for i := range acked {
		acked[i] = map[uint64]string{}
	}
	snapshot := func() []map[uint64]string {
		mu.Lock()
		defer mu.Unlock()
		out := make([]map[uint64]string, nlogs)
		for i, m := range acked {
			out[i] = make(map[uint64]string, len(m))
			for k, v := range m {
				out[i][k] = v
			}
		}
		return out
	}
	// check crashes now and holds the image to what was acknowledged before.
	check := func() {
		before := snapshot()
		got := crashedPayloads(t, c, paths)
		for i := range nlogs {
			for off, want := range before[i] {
				require.Less(t, off, uint64(len(got[i])), "log %d: acknowledged offset %d lost in the crash", i, off)
				require.Equal(t, want, got[i][off], "log %d offset %d", i, off)
			}
			// Unacknowledged records may survive, but only records
			// appended to this log, each writer's in the order it
			// appended them.
			next := make([]int, writers)
			for off, p := range got[i] {
				var li, w, seq int
				_, err := fmt.Sscanf(p, "log %d writer %d record %d", &li, &w, &seq)
				require.NoError(t, err, "log %d offset %d: %q was never appended", i, off, p)
				require.Equal(t, i, li, "log %d offset %d: %q belongs to another log", i, off, p)
				require.Less(t, w, writers)
				require.Equal(t, next[w], seq, "log %d offset %d: writer %d out of order", i, off, w)
				next[w]++
			}
		}
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	for i, l := range logs {
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seq := range perWriter {
					p := fmt.Sprintf("log %d writer %d record %d", i, w, seq)
					rec, err := l.Append([]byte(p))
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					acked[i][rec.Offset] = p
					mu.Unlock()
				}
			}()
		}
	}
	go func() { wg.Wait(); close(done) }()
	crashes := 0
	for running := true; running; crashes++ {
		select {
		case <-done:
			running = false
		default:
		}
		check()
	}
	all := snapshot()
	for i := range nlogs {
		require.Len(t, all[i], writers*perWriter, "log %d", i)
	}
	got := crashedPayloads(t, c, paths)
	for i := range nlogs {
		require.Len(t, got[i], writers*perWriter, "log %d: everything acknowledged, nothing more", i)
	}
	appends := int64(nlogs * writers * perWriter)
	require.Positive(t, s.calls.Load())
	require.LessOrEqual(t, s.calls.Load(), appends, "at most one sync of the file system per append")
	t.Logf("%d appends to %d logs, %d syncs of the file system, %d crash images", appends, nlogs, s.calls.Load(), crashes)
}

// TestCrashSharedSyncFailedRound: a sync of the file system that fails
// fails every append that joined it, in every log, and each of those logs
// turns writes away until reopened (docs/design.md § Sticky failure); a log
// whose append was in another round is untouched and syncs its own file
// from then on (the failed sync broke the group). A crash then keeps every
// acknowledged record, and nothing that was not appended.
func TestCrashSharedSyncFailedRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		roundErr := errors.New("write-back error")
		c, err := logtest.NewCrashFS(t.TempDir())
		require.NoError(t, err)
		s := &scriptedSyncFS{CrashFS: c}
		logs, paths := sharedLogs(t, s, 3)
		a, b, cl := logs[0], logs[1], logs[2]
		for i, l := range logs {
			for seq := range 2 {
				_, err := l.Append([]byte(fmt.Sprintf("%d.%d", i, seq)))
				require.NoError(t, err)
			}
		}
		appendAsync := func(l *log.Log, p string) <-chan error {
			out := make(chan error, 1)
			go func() {
				_, err := l.Append([]byte(p))
				out <- err
			}()
			return out
		}

		script := make(chan error)
		s.script.Store(&script)
		calls := s.calls.Load()
		a2 := appendAsync(a, "0.2")
		synctest.Wait() // round 1 (log 0 alone) runs, held in SyncFS
		require.Equal(t, calls+1, s.calls.Load())
		b2 := appendAsync(b, "1.2")
		c2 := appendAsync(cl, "2.2")
		synctest.Wait() // logs 1 and 2 wait in round 2
		b3 := appendAsync(b, "1.3")
		synctest.Wait() // queued in log 1 behind its writer
		require.Equal(t, 1, log.QueuedAppends(b))

		script <- nil // round 1 succeeds
		require.NoError(t, <-a2)
		synctest.Wait()
		require.Equal(t, calls+2, s.calls.Load(), "round 2 has started")
		script <- roundErr // round 2 fails
		s.script.Store(nil)
		for name, ch := range map[string]<-chan error{"1.2": b2, "2.2": c2} {
			err := <-ch
			require.ErrorIs(t, err, roundErr, name)
			require.NotErrorIs(t, err, log.ErrFailed, "%s failed by its own sync", name)
		}
		err = <-b3
		require.ErrorIs(t, err, log.ErrFailed, "queued behind the failed batch")
		require.ErrorIs(t, err, roundErr)

		// Logs 1 and 2 are sticky-failed; log 0 takes appends, synced by
		// its own file's sync: the failed sync broke the group.
		for _, l := range []*log.Log{b, cl} {
			require.ErrorIs(t, l.Failed(), roundErr)
			_, err := l.Append([]byte("refused"))
			require.ErrorIs(t, err, log.ErrFailed)
		}
		require.NoError(t, a.Failed())
		before := s.calls.Load()
		_, err = a.Append([]byte("0.3"))
		require.NoError(t, err)
		require.Equal(t, before, s.calls.Load(), "no sync of the file system after the failed one")

		// The crash keeps every acknowledged record. Round 1 read the
		// files after logs 1 and 2 wrote 1.2 and 2.2 (it was under way),
		// so a crash may keep those too: written, never acknowledged,
		// and cut from the live files when their sync failed.
		want := [][]string{{"0.0", "0.1", "0.2", "0.3"}, {"1.0", "1.1"}, {"2.0", "2.1"}}
		crashed := crashedPayloads(t, c, paths)
		require.Equal(t, want[0], crashed[0])
		for i, extra := range []string{"1.2", "2.2"} {
			got := crashed[i+1]
			require.GreaterOrEqual(t, len(got), len(want[i+1]), "log %d", i+1)
			require.Equal(t, want[i+1], got[:len(want[i+1])], "log %d keeps its acknowledged records", i+1)
			if rest := got[len(want[i+1]):]; len(rest) > 0 {
				require.Equal(t, []string{extra}, rest, "log %d: nothing but its unacknowledged append", i+1)
			}
		}

		// Reopened live, a failed log holds its acknowledged records and
		// takes appends again.
		require.NoError(t, b.Close())
		reopened, err := log.OpenWithOptions(paths[1], log.Options{FS: s})
		require.NoError(t, err)
		defer reopened.Close()
		recs, err := reopened.Read(0, 10)
		require.NoError(t, err)
		var got []string
		for _, r := range recs {
			got = append(got, string(r.Payload))
		}
		require.Equal(t, want[1], got)
		_, err = reopened.Append([]byte("1.2 again"))
		require.NoError(t, err)
	})
}
