package segment_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
)

// visible is what a reader of a log sees: its start and its payloads.
type visible struct {
	start    uint64
	payloads []string
}

func seen(t *testing.T, l *segment.Log) visible {
	t.Helper()
	v := visible{start: l.LogStart(), payloads: []string{}}
	for _, r := range readAll(t, l) {
		v.payloads = append(v.payloads, string(r.Payload))
	}
	return v
}

// crashOp is one step of a crash test's life; truncate marks a Truncate,
// whose crash may leave any prefix between its before and after.
type crashOp struct {
	run      func(l *segment.Log) error
	truncate bool
}

func batch(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "%s%02d%s", prefix, i, make([]byte, 66))
	}
	return out
}

// The life every crash test replays: appends that roll twice, an
// AdvanceStart that deletes a segment and persists a start inside the
// next, a Truncate across segments, a ResetTo, an append after it.
var crashOps = []crashOp{
	{run: func(l *segment.Log) error { _, err := l.AppendBatch(batch("a", 10)); return err }},
	{run: func(l *segment.Log) error { _, err := l.AppendBatch(batch("b", 10)); return err }}, // rolls
	{run: func(l *segment.Log) error { _, err := l.AppendBatch(batch("c", 10)); return err }}, // rolls
	{run: func(l *segment.Log) error { _, err := l.AdvanceStart(12); return err }},
	{run: func(l *segment.Log) error { return l.Truncate(15) }, truncate: true},
	{run: func(l *segment.Log) error { _, err := l.Append([]byte("d")); return err }},
	{run: func(l *segment.Log) error { return l.ResetTo(40) }},
	{run: func(l *segment.Log) error { _, err := l.Append([]byte("e")); return err }},
}

var crashOpts = segment.Options{SegmentBytes: 1024, IndexInterval: 100}

// crashWant is the visible state after each op of crashOps returned.
func crashWant() []visible {
	strs := func(b [][]byte) []string {
		out := []string{}
		for _, p := range b {
			out = append(out, string(p))
		}
		return out
	}
	a, b, c := strs(batch("a", 10)), strs(batch("b", 10)), strs(batch("c", 10))
	ab := append(slices.Clone(a), b...)
	abc := append(slices.Clone(ab), c...)
	return []visible{
		{0, []string{}},
		{0, a},
		{0, ab},
		{0, abc},
		{12, abc[12:]},
		{12, abc[12:15]},
		{12, append(slices.Clone(abc[12:15]), "d")},
		{40, []string{}},
		{40, []string{"e"}},
	}
}

// requireCrashState checks the state found after a crash with k ops
// returned: that of op k or of op k+1, or for a Truncate in flight any
// prefix of the old state at least as long as the new.
func requireCrashState(t *testing.T, k int, got visible) {
	t.Helper()
	want := crashWant()
	if k+1 >= len(want) {
		require.Equal(t, want[k], got)
		return
	}
	if got.start == want[k].start && k < len(crashOps) && crashOps[k].truncate {
		require.True(t, len(got.payloads) >= len(want[k+1].payloads) && slices.Equal(got.payloads, want[k].payloads[:len(got.payloads)]),
			"a truncate in flight leaves a prefix: got %v", got)
		return
	}
	require.Contains(t, []visible{want[k], want[k+1]}, got, "crash with %d ops returned", k)
}

// crashLife runs crashOps on a log in dir through fsys, counting the ops
// that returned, and stops at the first failure (a killed process).
func crashLife(fsys durable.FS, dir string, done *atomic.Int32) {
	opts := crashOpts
	opts.Log.FS = fsys
	l, err := segment.Open(dir, opts)
	if err != nil {
		return
	}
	for _, op := range crashOps {
		if op.run(l) != nil {
			break
		}
		done.Add(1)
	}
	_ = l.Close()
}

// TestSegmentCrashAtEveryStep crashes the life above (rolls, deletion by
// AdvanceStart, Truncate across segments, ResetTo) before each of its
// file-system steps in turn, with logtest.KillBefore as log/crashsim_test.go
// does: the first life dies before step n, its unsynced writes still in the
// page cache; a second life opens what it left, which must be exactly the
// state of the last op that returned or of the one in flight (doc.go §
// Recovery), appends and is acknowledged; then the power fails, and the
// crashed copy must hold exactly what the second life served and
// acknowledged, offsets dense, nothing below the start visible.
func TestSegmentCrashAtEveryStep(t *testing.T) {
	counter := logtest.NewFaultFS(nil)
	var ignored atomic.Int32
	crashLife(counter, filepath.Join(t.TempDir(), "p"), &ignored)
	require.Equal(t, int32(len(crashOps)), ignored.Load())
	steps := counter.Total()
	require.Greater(t, steps, 40)

	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprint("dies before step ", n), func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "p")
			var done atomic.Int32
			c, err := logtest.KillBefore(root, n, func(fsys durable.FS) { crashLife(fsys, dir, &done) })
			require.NoError(t, err)
			k := int(done.Load())

			opts := crashOpts
			opts.Log.FS = c
			l, err := segment.Open(dir, opts)
			require.NoError(t, err, "the second life opens what the first left")
			served := seen(t, l)
			requireCrashState(t, k, served)
			rec, err := l.Append([]byte("z"))
			require.NoError(t, err)
			require.Equal(t, served.start+uint64(len(served.payloads)), rec.Offset, "dense")
			served.payloads = append(served.payloads, "z")
			require.NoError(t, l.Close())

			dst := filepath.Join(t.TempDir(), "crashed")
			require.NoError(t, c.Crash(dst))
			crashed := openSeg(t, filepath.Join(dst, "p"), crashOpts)
			require.Equal(t, served, seen(t, crashed), "what the second life served and acknowledged survives the power loss")
		})
	}
}

// TestSegmentCrashPowerLossAtEveryStep: the same life, with the power
// failing before each step instead (nothing unsynced survives); the
// crashed copy holds the state of the last op that returned or of the one
// in flight.
func TestSegmentCrashPowerLossAtEveryStep(t *testing.T) {
	counter := logtest.NewFaultFS(nil)
	var ignored atomic.Int32
	crashLife(counter, filepath.Join(t.TempDir(), "p"), &ignored)
	steps := counter.Total()
	for n := 1; n <= steps; n++ {
		t.Run(fmt.Sprint("before step ", n), func(t *testing.T) {
			root := t.TempDir()
			c, err := logtest.NewCrashFS(root)
			require.NoError(t, err)
			dst := filepath.Join(t.TempDir(), "crashed")
			var done, seenOps, atCrash atomic.Int32
			atCrash.Store(-1)
			ffs := logtest.NewFaultFS(c)
			ffs.SetFault(func(logtest.Op, string) error {
				if seenOps.Add(1) == int32(n) {
					atCrash.Store(done.Load())
					require.NoError(t, c.Crash(dst))
				}
				return nil
			})
			crashLife(ffs, filepath.Join(root, "p"), &done)
			k := int(atCrash.Load())
			require.GreaterOrEqual(t, k, 0)
			l := openSeg(t, filepath.Join(dst, "p"), crashOpts)
			requireCrashState(t, k, seen(t, l))
		})
	}
}

// TestSegmentCrashLegacyUpgrade: the rename of a legacy log.bin and a first
// append (which rolls by age: the legacy records are years old), killed
// before each step; the log always opens with the legacy records, and what
// a second life served survives a power loss.
func TestSegmentCrashLegacyUpgrade(t *testing.T) {
	legacy, err := os.ReadFile(filepath.Join("testdata", "legacy", segment.LegacyFileName))
	require.NoError(t, err)
	life := func(fsys durable.FS, dir string) {
		l, err := segment.Open(dir, segment.Options{Log: log.Options{FS: fsys}})
		if err == nil {
			_, _ = l.Append([]byte("after"))
			_ = l.Close()
		}
	}
	setup := func(root string) string {
		dir := filepath.Join(root, "p")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, segment.LegacyFileName), legacy, 0o644))
		return dir
	}
	counter := logtest.NewFaultFS(nil)
	life(counter, setup(t.TempDir()))
	steps := counter.Total()
	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprint("dies before step ", n), func(t *testing.T) {
			root := t.TempDir()
			dir := setup(root)
			c, err := logtest.KillBefore(root, n, func(fsys durable.FS) { life(fsys, dir) })
			require.NoError(t, err)
			l, err := segment.Open(dir, segment.Options{Log: log.Options{FS: c}})
			require.NoError(t, err)
			served := seen(t, l)
			require.GreaterOrEqual(t, len(served.payloads), 2)
			require.Equal(t, "hello, pystream", served.payloads[0])
			require.NoError(t, l.Close())
			dst := filepath.Join(t.TempDir(), "crashed")
			require.NoError(t, c.Crash(dst))
			crashed := openSeg(t, filepath.Join(dst, "p"), segment.Options{})
			require.Equal(t, served, seen(t, crashed))
			require.NotContains(t, fileNames(t, filepath.Join(dst, "p")), segment.LegacyFileName)
		})
	}
}
