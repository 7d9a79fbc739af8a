package log_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// crashCopy crashes c into a fresh directory and returns where path (below
// c's root) lands in it.
func crashCopy(t *testing.T, c *logtest.CrashFS, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "crashed")
	require.NoError(t, c.Crash(dst))
	rel, err := filepath.Rel(c.Root(), path)
	require.NoError(t, err)
	return filepath.Join(dst, rel)
}

// checkCrashedLog opens the crashed copy of a log and requires every record
// in acked to be there, byte for byte, at its offset. Records appended but
// not yet acknowledged at the crash may or may not survive; whatever
// survives must be a whole, readable log.
func checkCrashedLog(t *testing.T, path string, acked map[uint64]log.Record) {
	t.Helper()
	l, err := log.Open(path)
	require.NoError(t, err, "the crashed log opens cleanly, no corruption")
	defer l.Close()
	require.GreaterOrEqual(t, l.NextOffset(), uint64(len(acked)))
	recs, err := l.Read(0, int(l.NextOffset())+1)
	require.NoError(t, err)
	require.Len(t, recs, int(l.NextOffset()))
	for off, want := range acked {
		require.Less(t, off, uint64(len(recs)), "acknowledged offset %d lost in the crash", off)
		require.Equal(t, want, recs[off], "offset %d", off)
	}
}

// TestCrashSimLogKeepsAcknowledgedAppends pins docs/design.md § Invariants, 1
// under a simulated power loss: a log created in new directories and appended
// to by many goroutines keeps, after a crash, every record Append acknowledged
// before the crash, and the file opens without corruption. A crash is taken
// while appenders are still running and once more after they finish.
func TestCrashSimLogKeepsAcknowledgedAppends(t *testing.T) {
	const writers, perWriter = 8, 16
	root := t.TempDir()
	c, err := logtest.NewCrashFS(root)
	require.NoError(t, err)
	path := filepath.Join(root, "a", "b", "log.bin")
	l, err := log.OpenWithOptions(path, log.Options{FS: c})
	require.NoError(t, err)
	defer l.Close()

	var mu sync.Mutex
	acked := map[uint64]log.Record{}
	snapshot := func() map[uint64]log.Record {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[uint64]log.Record, len(acked))
		for k, v := range acked {
			out[k] = v
		}
		return out
	}
	halfway := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				rec, err := l.Append([]byte(fmt.Sprintf("writer %d record %d", w, i)))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[rec.Offset] = rec
				n := len(acked)
				mu.Unlock()
				if n == writers*perWriter/2 {
					once.Do(func() { close(halfway) })
				}
			}
		}()
	}
	<-halfway
	before := snapshot()
	checkCrashedLog(t, crashCopy(t, c, path), before)
	wg.Wait()
	all := snapshot()
	require.Len(t, all, writers*perWriter)
	checkCrashedLog(t, crashCopy(t, c, path), all)
}

// TestCrashSimLogCreateSurvives: a log just created in new directories
// survives a crash as an empty log, not as a missing file; the first open
// after the crash must not silently start a different log.
func TestCrashSimLogCreateSurvives(t *testing.T) {
	root := t.TempDir()
	c, err := logtest.NewCrashFS(root)
	require.NoError(t, err)
	path := filepath.Join(root, "x", "y", "log.bin")
	l, err := log.OpenWithOptions(path, log.Options{FS: c})
	require.NoError(t, err)
	defer l.Close()
	crashed := crashCopy(t, c, path)
	require.FileExists(t, crashed)
}

// TestCrashSimWriteFile pins docs/design.md § Invariants, 2 under a simulated
// power loss: once durable.WriteFile returns, a crash keeps the new content
// (also for a first write in new directories); a crash part-way through the
// temp/fsync/rename/dir-fsync sequence keeps the old content.
func TestCrashSimWriteFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		// steps runs against path, which holds "old" durably, through c.
		steps func(t *testing.T, c *logtest.CrashFS, path string)
		want  string
	}{
		{
			name: "WriteFile returned",
			steps: func(t *testing.T, c *logtest.CrashFS, path string) {
				require.NoError(t, durable.WriteFile(c, path, []byte("new")))
			},
			want: "new",
		},
		{
			name: "temp written and synced, no rename",
			steps: func(t *testing.T, c *logtest.CrashFS, path string) {
				f, err := c.OpenFile(path+durable.TempSuffix, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				require.NoError(t, err)
				_, err = f.WriteAt([]byte("new"), 0)
				require.NoError(t, err)
				require.NoError(t, f.Sync())
				require.NoError(t, f.Close())
			},
			want: "old",
		},
		{
			name: "renamed, directory not synced",
			steps: func(t *testing.T, c *logtest.CrashFS, path string) {
				f, err := c.OpenFile(path+durable.TempSuffix, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				require.NoError(t, err)
				_, err = f.WriteAt([]byte("new"), 0)
				require.NoError(t, err)
				require.NoError(t, f.Sync())
				require.NoError(t, f.Close())
				require.NoError(t, c.Rename(path+durable.TempSuffix, path))
			},
			want: "old",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "meta.json")
			require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
			c, err := logtest.NewCrashFS(root)
			require.NoError(t, err)
			tc.steps(t, c, path)
			got, err := os.ReadFile(crashCopy(t, c, path))
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
		})
	}

	t.Run("first write in new directories", func(t *testing.T) {
		root := t.TempDir()
		c, err := logtest.NewCrashFS(root)
		require.NoError(t, err)
		path := filepath.Join(root, "p", "q", "meta.json")
		_, err = durable.MkdirAll(c, filepath.Dir(path))
		require.NoError(t, err)
		require.NoError(t, durable.WriteFile(c, path, []byte("first")))
		got, err := os.ReadFile(crashCopy(t, c, path))
		require.NoError(t, err)
		require.Equal(t, "first", string(got))
	})
}

// TestCrashSimLogAtEveryStep crashes a short life of a log (created in new
// directories, appended to, truncated, appended to again) before each of its
// file-system operations in turn. The crashed copy must open without corruption
// and hold exactly the records of the last operation that had returned, or of
// the one in flight (docs/design.md § Invariants, 1: acknowledged means
// durable; Truncate durably drops).
func TestCrashSimLogAtEveryStep(t *testing.T) {
	// Each op changes the log; want[i] is the payloads after op i returned.
	ops := []func(l *log.Log) error{
		func(l *log.Log) error { _, err := l.Append([]byte("a")); return err },
		func(l *log.Log) error { _, err := l.AppendBatch([][]byte{[]byte("b"), []byte("c")}); return err },
		func(l *log.Log) error { return l.Truncate(1) },
		func(l *log.Log) error { _, err := l.Append([]byte("d")); return err },
	}
	want := [][]string{{}, {"a"}, {"a", "b", "c"}, {"a"}, {"a", "d"}}

	run := func(t *testing.T, fsys durable.FS, path string, done *atomic.Int32) {
		l, err := log.OpenWithOptions(path, log.Options{FS: fsys})
		require.NoError(t, err)
		for _, op := range ops {
			require.NoError(t, op(l))
			done.Add(1)
		}
		require.NoError(t, l.Close())
	}
	counter := logtest.NewFaultFS(nil)
	var ignored atomic.Int32
	run(t, counter, filepath.Join(t.TempDir(), "a", "log.bin"), &ignored)
	steps := counter.Total()

	for n := 1; n <= steps; n++ {
		t.Run(fmt.Sprint("before step ", n), func(t *testing.T) {
			root := t.TempDir()
			c, err := logtest.NewCrashFS(root)
			require.NoError(t, err)
			path := filepath.Join(root, "a", "log.bin")
			dst := filepath.Join(t.TempDir(), "crashed")
			var done atomic.Int32
			var seen, doneAtCrash atomic.Int32
			doneAtCrash.Store(-1)
			ffs := logtest.NewFaultFS(c)
			ffs.SetFault(func(logtest.Op, string) error {
				if seen.Add(1) == int32(n) {
					doneAtCrash.Store(done.Load())
					require.NoError(t, c.Crash(dst))
				}
				return nil
			})
			run(t, ffs, path, &done)
			require.Equal(t, int32(steps), seen.Load(), "the run takes the steps counted")
			k := int(doneAtCrash.Load())
			require.GreaterOrEqual(t, k, 0, "the crash happened")

			l, err := log.Open(filepath.Join(dst, "a", "log.bin"))
			require.NoError(t, err, "the crashed log opens cleanly")
			defer l.Close()
			recs, err := l.Read(0, 10)
			require.NoError(t, err)
			got := []string{}
			for _, r := range recs {
				got = append(got, string(r.Payload))
			}
			if k+1 < len(want) {
				require.Contains(t, [][]string{want[k], want[k+1]}, got, "crash with %d ops returned", k)
			} else {
				require.Equal(t, want[k], got)
			}
		})
	}
}

// TestCrashSimRestartAfterProcessCrash kills a log's first life (created in
// new directories, then appended to) before each of its file-system
// operations in turn, the way a process dies: everything it wrote stays in
// the page cache, nothing after that point happens. A second life then opens
// the same files, reads what is there and, in one variant, appends and is
// acknowledged; then the power fails. Whatever the second life served and
// acknowledged must survive: a restart must make durable what an earlier
// process left unsynced (file contents and directory entries) before it
// relies on it.
func TestCrashSimRestartAfterProcessCrash(t *testing.T) {
	firstLife := func(fsys durable.FS, path string) {
		l, err := log.OpenWithOptions(path, log.Options{FS: fsys})
		if err != nil {
			return
		}
		if _, err := l.Append([]byte("a")); err == nil {
			_, _ = l.AppendBatch([][]byte{[]byte("b"), []byte("c")})
		}
		_ = l.Close() // the process is dead; whatever Close reports is moot
	}
	counter := logtest.NewFaultFS(nil)
	firstLife(counter, filepath.Join(t.TempDir(), "a", "b", "log.bin"))
	steps := counter.Total()
	require.Greater(t, steps, 5)

	for _, appendAfter := range []bool{false, true} {
		for n := 1; n <= steps+1; n++ {
			t.Run(fmt.Sprintf("append=%v/dies before step %d", appendAfter, n), func(t *testing.T) {
				root := t.TempDir()
				path := filepath.Join(root, "a", "b", "log.bin")
				c, err := logtest.KillBefore(root, n, func(fsys durable.FS) { firstLife(fsys, path) })
				require.NoError(t, err)

				l, err := log.OpenWithOptions(path, log.Options{FS: c})
				require.NoError(t, err, "the second life opens what the first left")
				served, err := l.Read(0, 10)
				require.NoError(t, err)
				if appendAfter {
					rec, err := l.Append([]byte("z"))
					require.NoError(t, err)
					served = append(served, rec)
				}
				require.NoError(t, l.Close())

				crashed, err := log.Open(crashCopy(t, c, path))
				require.NoError(t, err, "the crashed log opens cleanly")
				defer crashed.Close()
				got, err := crashed.Read(0, 10)
				require.NoError(t, err)
				require.Equal(t, served, got, "what the second life served and acknowledged survives the power loss")
			})
		}
	}
}
