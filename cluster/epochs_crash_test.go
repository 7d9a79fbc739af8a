package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
)

// The crash tests of the leader-epoch history run real segment logs with
// their histories on a logtest.CrashFS. Every record's payload names the
// run it was appended under (epoch:id), so that after any crash the
// reopened history can be held to the promise of epochs.go: no record is
// found in a run it was not written in, and no run starts at or past the
// log's end.

// Runs the crash lives follow, as a leader would send them.
var (
	crashRunA = EpochRun{Epoch: 1, ID: 0xa, Start: 0}
	crashRunB = EpochRun{Epoch: 2, ID: 0xb, Start: 4}
	crashRunX = EpochRun{Epoch: 2, ID: 0x1f, Start: 8} // a run whose records a crash lost
	crashRunC = EpochRun{Epoch: 5, ID: 0xc}
	crashRunD = EpochRun{Epoch: 6, ID: 0xd}
)

// epochCrashOptions rolls a segment every few records, so that a cut
// crosses segments.
func epochCrashOptions(fsys durable.FS) segment.Options {
	return segment.Options{Log: log.Options{FS: fsys}, SegmentBytes: segment.MinSegmentBytes}
}

// taggedPayload is a record appended under run: its epoch and id, and
// padding that makes segments roll.
func taggedPayload(run EpochRun, i int) []byte {
	return fmt.Appendf(nil, "%d:%016x:%d|%s", run.Epoch, run.ID, i, strings.Repeat("x", 200))
}

// payloadRun reads the run a taggedPayload names.
func payloadRun(t *testing.T, p []byte) EpochRun {
	t.Helper()
	head, _, ok := strings.Cut(string(p), "|")
	require.True(t, ok, "%q", p)
	var r EpochRun
	var i int
	_, err := fmt.Sscanf(head, "%d:%x:%d", &r.Epoch, &r.ID, &i)
	require.NoError(t, err, "%q", head)
	return r
}

// appendUnder appends n records tagged with run, which must be the run
// the history says holds the log's end.
func appendUnder(l *segment.Log, h *epochHistory, run EpochRun, n int) error {
	if got := runAt(h.snapshot(), l.NextOffset()); !sameRun(got, run) {
		return fmt.Errorf("the history holds %d in %v, not %v", l.NextOffset(), got, run)
	}
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = taggedPayload(run, i)
	}
	_, err := l.AppendBatch(payloads)
	return err
}

// leadAndAppend is a leader's append at epoch: the history first.
func leadAndAppend(l *segment.Log, h *epochHistory, epoch uint64, n int) error {
	if err := h.lead(epoch, l.NextOffset()); err != nil {
		return err
	}
	return appendUnder(l, h, runAt(h.snapshot(), l.NextOffset()), n)
}

// followAndAppend is a follower's append of n records its leader sent
// with runs: the history first.
func followAndAppend(l *segment.Log, h *epochHistory, runs []EpochRun, n int) error {
	end := l.NextOffset()
	if err := h.follow(end, runs); err != nil {
		return err
	}
	return appendUnder(l, h, runAt(runs, end), n)
}

// openEpochReplica opens the log and the history in dir on fsys, as a
// Broker opens a replica.
func openEpochReplica(fsys durable.FS, dir string, logf func(string, ...any)) (*segment.Log, *epochHistory, error) {
	l, err := segment.Open(dir, epochCrashOptions(fsys))
	if err != nil {
		return nil, nil, err
	}
	h, err := openEpochHistory(fsys, dir, l.LogStart(), l.NextOffset(), logf)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (and closing the log: %w)", err, l.Close())
	}
	return l, h, nil
}

// prepareEpochReplica builds the replica every crash life starts from, in
// <base>/replica: records 0-3 followed from crashRunA, 4-7 from crashRunB,
// and a file that still names crashRunX at 8, whose records were lost.
func prepareEpochReplica(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "replica")
	l, h, err := openEpochReplica(durable.OS, dir, t.Logf)
	require.NoError(t, err)
	require.NoError(t, followAndAppend(l, h, []EpochRun{crashRunA}, 4))
	require.NoError(t, followAndAppend(l, h, []EpochRun{crashRunA, crashRunB}, 4))
	require.NoError(t, l.Close())
	require.Len(t, h.snapshot(), 2)
	writeEpochsFile(t, dir, append(h.snapshot(), crashRunX))
	return base
}

// requireEpochsAttributeRecords opens the replica in dir on fsys and holds
// its history to its log: every run starts below the log's end, and every
// record lies in the run it was appended under. A crash never damages the
// history, so nothing is logged. It returns the log's end.
func requireEpochsAttributeRecords(t *testing.T, fsys durable.FS, dir string) uint64 {
	t.Helper()
	logged := &logLines{}
	l, h, err := openEpochReplica(fsys, dir, logged.logf)
	require.NoError(t, err, "the replica reopens")
	defer func() { require.NoError(t, l.Close()) }()
	require.Empty(t, logged.lines, "a crash never damages the history")
	end := l.NextOffset()
	runs := h.snapshot()
	for _, r := range runs {
		require.Less(t, r.Start, end, "run %v starts at or past the log end in %v", r, runs)
	}
	recs, err := l.Read(0, int(end)+1)
	require.NoError(t, err)
	require.Len(t, recs, int(end))
	for _, rec := range recs {
		want := payloadRun(t, rec.Payload)
		got := runAt(runs, rec.Offset)
		require.True(t, sameRun(want, got), "offset %d was appended under %v; the history %v says %v", rec.Offset, want, runs, got)
	}
	return end
}

// epochCrashLives are the histories' three writes, each in a life that
// stops at its first error, as a killed process does.
var epochCrashLives = []struct {
	name string
	life func(l *segment.Log, h *epochHistory) error
}{
	{"a leader's new runs", func(l *segment.Log, h *epochHistory) error {
		for _, step := range []struct {
			epoch uint64
			n     int
		}{{3, 2}, {3, 1}, {4, 2}} {
			if err := leadAndAppend(l, h, step.epoch, step.n); err != nil {
				return err
			}
		}
		return nil
	}},
	{"a follower's follow", func(l *segment.Log, h *epochHistory) error {
		c, d := at(crashRunC, 10), at(crashRunD, 13)
		for _, step := range []struct {
			runs []EpochRun
			n    int
		}{
			{[]EpochRun{crashRunA, crashRunB}, 2}, // adds nothing; the file still names crashRunX
			{[]EpochRun{crashRunB, c}, 2},         // a retry's runs from before the end, then a new run
			{nil, 1},                              // an unknown run
			{[]EpochRun{c, d}, 1},
		} {
			if err := followAndAppend(l, h, step.runs, step.n); err != nil {
				return err
			}
		}
		return nil
	}},
	{"a cut", func(l *segment.Log, h *epochHistory) error {
		if err := l.Truncate(6); err != nil {
			return err
		}
		if err := h.truncate(6); err != nil {
			return err
		}
		if err := followAndAppend(l, h, []EpochRun{at(crashRunC, 6)}, 2); err != nil {
			return err
		}
		if err := l.Truncate(3); err != nil {
			return err
		}
		if err := h.truncate(3); err != nil {
			return err
		}
		return leadAndAppend(l, h, 7, 2)
	}},
}

// TestCrashEpochHistoryNeverMisattributesRecords kills each of the
// history's writes before every file-system step in turn. A power loss at
// the kill, the state the killed process left, and a power loss after the
// next process appended again as leader must each reopen with a history
// that attributes every record to the run it was appended under.
func TestCrashEpochHistoryNeverMisattributesRecords(t *testing.T) {
	prepared := prepareEpochReplica(t)
	for _, lc := range epochCrashLives {
		t.Run(lc.name, func(t *testing.T) {
			life := func(fsys durable.FS, dir string) error {
				l, h, err := openEpochReplica(fsys, dir, t.Logf)
				if err != nil {
					return err
				}
				err = lc.life(l, h)
				_ = l.Close() // a killed process closes nothing properly
				return err
			}
			counter := logtest.NewFaultFS(nil)
			whole := filepath.Join(t.TempDir(), "whole")
			require.NoError(t, os.CopyFS(whole, os.DirFS(prepared)))
			require.NoError(t, life(counter, filepath.Join(whole, "replica")), "the life runs whole")
			wholeEnd := requireEpochsAttributeRecords(t, durable.OS, filepath.Join(whole, "replica"))
			steps := counter.Total()
			require.Greater(t, steps, 10)

			ends := map[uint64]bool{}
			for n := 1; n <= steps+1; n++ {
				t.Run(fmt.Sprintf("dies before step %d of %d", n, steps), func(t *testing.T) {
					base := t.TempDir()
					require.NoError(t, os.CopyFS(base, os.DirFS(prepared)))
					dir := filepath.Join(base, "replica")
					crash, err := logtest.KillBefore(base, n, func(fsys durable.FS) { _ = life(fsys, dir) })
					require.NoError(t, err)

					lost := filepath.Join(t.TempDir(), "crashed")
					require.NoError(t, crash.Crash(lost))
					ends[requireEpochsAttributeRecords(t, durable.OS, filepath.Join(lost, "replica"))] = true

					requireEpochsAttributeRecords(t, crash, dir)
					// The next process leads from what it found.
					l, h, err := openEpochReplica(crash, dir, t.Logf)
					require.NoError(t, err)
					require.NoError(t, leadAndAppend(l, h, 9, 1))
					require.NoError(t, l.Close())
					after := filepath.Join(t.TempDir(), "after")
					require.NoError(t, crash.Crash(after))
					requireEpochsAttributeRecords(t, durable.OS, filepath.Join(after, "replica"))
				})
			}
			require.True(t, ends[wholeEnd], "some kill kept the whole life: %v", ends)
			require.Greater(t, len(ends), 2, "kills at several log ends: %v", ends)
		})
	}
}
