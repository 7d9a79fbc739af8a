package wal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/log/wal"
)

// These tests kill a life that writes several logs through one journal
// before each of its file-system steps in turn (logtest.KillBefore), as
// log/segment/crash_test.go does for a log alone, and hold what comes back
// to what the life was told: every acknowledged record is there, in
// order, offsets dense, and nothing is there that was never appended or
// that a truncate cut. What comes back is looked at twice: after a power
// loss right after the kill (only what was synced, then replay), and after
// a restart on the killed life's page cache followed by a power loss (what
// the restart served must survive it).

// crashGenerationBytes is small, so that generations are made ahead and
// moved on to inside a life of a few dozen appends, and so that a CrashFS,
// which reads a file back at each fsync, does not read megabytes;
// crashCheckpointBytes makes background checkpoints run inside it too.
const (
	crashGenerationBytes = 1024
	crashCheckpointBytes = 2048
)

// maxSteps bounds the loops over steps: a life that is still killed at
// step maxSteps fails the test rather than looping on.
const maxSteps = 2000

// The ops of a crash life's script, one per log in a round.
type opKind int

const (
	opAppend opKind = iota
	opTruncate
	opAdvanceStart
	opResetTo
)

// crashRound is one round of a life: the same kind of op on every log at
// once, each from its own goroutine (so that their commits share rounds of
// the journal). tag names an append's payload; at is a truncate's end, an
// AdvanceStart's or a ResetTo's start.
type crashRound struct {
	kind opKind
	tag  string
	at   uint64
	pad  int
}

// payload is what round r appends to log i: unique, and of the round's
// length, so that a record of one round never reads as one of another.
func (r crashRound) payload(i int) string {
	return fmt.Sprintf("log %d %s %s", i, r.tag, strings.Repeat("x", r.pad))
}

// appends is n append rounds tagged prefix<k>, payloads padded to pad.
func appends(prefix string, n, pad int) []crashRound {
	out := make([]crashRound, n)
	for k := range out {
		out[k] = crashRound{kind: opAppend, tag: fmt.Sprintf("%s%02d", prefix, k), pad: pad}
	}
	return out
}

// logModel is what a life told one log's callers: the state as of the
// last op that returned, and the op that failed, if one did (the process
// was killed in it: it may or may not have happened, or for a cut have
// half happened).
type logModel struct {
	start    uint64
	state    []string
	inflight *crashRound
	log      int
}

// settle records the outcome of round r on the log.
func (m *logModel) settle(r crashRound, err error) {
	if err != nil {
		m.inflight = &r
		return
	}
	m.state, m.start = apply(m.state, m.start, r, m.log)
}

// apply is the state after op r returned.
func apply(state []string, start uint64, r crashRound, log int) ([]string, uint64) {
	switch r.kind {
	case opAppend:
		return append(slices.Clone(state), r.payload(log)), start
	case opTruncate:
		return slices.Clone(state[:r.at-start]), start
	case opAdvanceStart:
		return slices.Clone(state[r.at-start:]), r.at
	case opResetTo:
		return []string{}, r.at
	}
	panic("unknown op")
}

// seenLog is what a reader of a log sees: its start and its payloads,
// offsets dense from the start.
type seenLog struct {
	start    uint64
	payloads []string
}

// requireModel holds what a log shows after a crash to what its life was
// told: the state of its last op that returned, or that of the op in
// flight; a cut or a deletion of old segments in flight may have half
// happened (a prefix of the old state at least as long as the cut one;
// a start between the old and the new).
func requireModel(t *testing.T, m *logModel, got seenLog, msgAndArgs ...any) {
	t.Helper()
	want := seenLog{start: m.start, payloads: m.state}
	if got.start == want.start && slices.Equal(got.payloads, want.payloads) {
		return
	}
	msg := fmt.Sprint(msgAndArgs...)
	r := m.inflight
	require.NotNil(t, r, "%s: log %d: no op in flight, want exactly %v, got %v", msg, m.log, want, got)
	next, nextStart := apply(m.state, m.start, *r, m.log)
	if got.start == nextStart && slices.Equal(got.payloads, next) {
		return
	}
	switch r.kind {
	case opTruncate:
		require.Equal(t, m.start, got.start, "%s: log %d", msg, m.log)
		require.True(t, len(got.payloads) >= len(next) && len(got.payloads) <= len(m.state) &&
			slices.Equal(got.payloads, m.state[:len(got.payloads)]),
			"%s: log %d: a cut in flight leaves a prefix of the old records at least as long as the cut: want a prefix of %q, at least %d, got %q",
			msg, m.log, m.state, len(next), got.payloads)
		return
	case opAdvanceStart:
		require.True(t, got.start >= m.start && got.start <= nextStart &&
			slices.Equal(got.payloads, m.state[got.start-m.start:]),
			"%s: log %d: an AdvanceStart in flight leaves a start between the old %d and the new %d and the records above it: state %q, got %v",
			msg, m.log, m.start, nextStart, m.state, got)
		return
	}
	require.Failf(t, "lost or made-up records",
		"%s: log %d: op %+v in flight: want %v or {%d %q}, got %v", msg, m.log, *r, want, nextStart, next, got)
}

// phase1Opts journals every log.bin below the root.
var phase1Opts = wal.Options{Journaled: journaledLogs, GenerationBytes: crashGenerationBytes, CheckpointBytes: crashCheckpointBytes}

func phase1Path(root string, i int) string {
	return filepath.Join(root, fmt.Sprintf("p%d", i), log.FileName)
}

// runRound runs round r on every log at once and settles the models. It
// reports whether every op returned nil.
func runRound[L any](logs []L, models []*logModel, r crashRound, do func(l L, i int) error) bool {
	errs := make([]error, len(logs))
	var wg sync.WaitGroup
	for i, l := range logs {
		wg.Go(func() { errs[i] = do(l, i) })
	}
	wg.Wait()
	ok := true
	for i, err := range errs {
		models[i].settle(r, err)
		ok = ok && err == nil
	}
	return ok
}

func newModels(n int) []*logModel {
	out := make([]*logModel, n)
	for i := range out {
		out[i] = &logModel{log: i, state: []string{}}
	}
	return out
}

// phase1Life opens the journal and nlogs phase-1 logs through fsys, runs
// script on them round by round, stopping at the first failure (a killed
// process), then closes them (unless beforeClose says otherwise by
// killing fsys first). It reports whether everything, closes included,
// returned nil.
func phase1Life(fsys durable.FS, root string, models []*logModel, script []crashRound, beforeClose func()) bool {
	j, err := wal.Open(fsys, root, phase1Opts)
	if err != nil {
		return false
	}
	ok := true
	var logs []*log.Log
	for i := range models {
		l, err := log.OpenWithOptions(phase1Path(root, i), log.Options{FS: j})
		if err != nil {
			ok = false
			break
		}
		logs = append(logs, l)
	}
	for _, r := range script {
		if !ok {
			break
		}
		ok = runRound(logs, models, r, func(l *log.Log, i int) error {
			switch r.kind {
			case opAppend:
				_, err := l.Append([]byte(r.payload(i)))
				return err
			case opTruncate:
				return l.Truncate(r.at)
			}
			panic("not a phase-1 op")
		})
	}
	if beforeClose != nil {
		beforeClose()
	}
	for _, l := range logs {
		ok = l.Close() == nil && ok
	}
	return j.Close() == nil && ok
}

// readPhase1 is what a phase-1 log shows.
func readPhase1(t *testing.T, l *log.Log) seenLog {
	t.Helper()
	recs, err := l.Read(0, int(l.NextOffset())+1)
	require.NoError(t, err)
	got := seenLog{payloads: []string{}}
	for k, r := range recs {
		require.EqualValues(t, k, r.Offset, "offsets are dense")
		got.payloads = append(got.payloads, string(r.Payload))
	}
	return got
}

// openPhase1 opens the journal (replaying it) over fsys at root and the
// logs, and returns what they show; the logs and the journal are left
// open for the caller to close (crash may be taken first).
func openPhase1(t *testing.T, fsys durable.FS, root string, n int) ([]seenLog, func()) {
	t.Helper()
	j, err := wal.Open(fsys, root, phase1Opts)
	require.NoError(t, err, "the journal opens and replays")
	var logs []*log.Log
	var got []seenLog
	for i := range n {
		l, err := log.OpenWithOptions(phase1Path(root, i), log.Options{FS: j})
		require.NoError(t, err, "log %d opens after replay", i)
		logs = append(logs, l)
		got = append(got, readPhase1(t, l))
	}
	return got, func() {
		for _, l := range logs {
			require.NoError(t, l.Close())
		}
		require.NoError(t, j.Close())
	}
}

// requireRecovers checks a killed life's CrashFS twice over: a power loss
// right after the kill, then replay; and a restart on what the kill left
// (replay into the page cache, the logs reopened), then a power loss,
// then replay, which must show exactly what the restart served.
func requireRecovers(t *testing.T, c *logtest.CrashFS, models []*logModel, open func(t *testing.T, fsys durable.FS, root string) ([]seenLog, func())) {
	t.Helper()
	lost := filepath.Join(t.TempDir(), "lost")
	require.NoError(t, c.Crash(lost))
	got, closeAll := open(t, durable.OS, lost)
	for i, m := range models {
		requireModel(t, m, got[i], "power loss right after the kill")
	}
	closeAll()

	served, closeAll := open(t, c, c.Root())
	for i, m := range models {
		requireModel(t, m, served[i], "restart after the kill")
	}
	restarted := filepath.Join(t.TempDir(), "restarted")
	require.NoError(t, c.Crash(restarted))
	closeAll()
	got, closeAll = open(t, durable.OS, restarted)
	require.Equal(t, served, got, "what the restart served survives a power loss after it")
	closeAll()
}

func phase1Opener(n int) func(t *testing.T, fsys durable.FS, root string) ([]seenLog, func()) {
	return func(t *testing.T, fsys durable.FS, root string) ([]seenLog, func()) {
		return openPhase1(t, fsys, root, n)
	}
}

// killEveryStep runs life killed before step n for n = 1, 2, ... until a
// life completes, and checks each.
func killEveryStep(t *testing.T, nlogs int, life func(fsys durable.FS, root string, models []*logModel) bool,
	open func(t *testing.T, fsys durable.FS, root string) ([]seenLog, func())) {
	t.Helper()
	completed := false
	n := 1
	for ; n <= maxSteps && !completed; n++ {
		t.Run(fmt.Sprint("dies before step ", n), func(t *testing.T) {
			root := t.TempDir()
			models := newModels(nlogs)
			c, err := logtest.KillBefore(root, n, func(fsys durable.FS) { completed = life(fsys, root, models) })
			require.NoError(t, err)
			requireRecovers(t, c, models, open)
		})
		if t.Failed() {
			return
		}
	}
	require.True(t, completed, "a life of %d steps completes", maxSteps)
	t.Logf("a life of %d file-system steps, killed before each", n-2)
}

// TestCrashPhase1LogsAtEveryStep: three phase-1 logs appended to in
// rounds (one goroutine per log, their commits sharing the journal's
// rounds), generations of 1 KiB so that checkpoints run inside the life,
// the process killed before each step.
func TestCrashPhase1LogsAtEveryStep(t *testing.T) {
	const nlogs = 3
	script := appends("a", 10, 40)
	killEveryStep(t, nlogs, func(fsys durable.FS, root string, models []*logModel) bool {
		return phase1Life(fsys, root, models, script, nil)
	}, phase1Opener(nlogs))
}

// truncateScript appends, cuts every log back to two records while the
// journal holds their writes, and appends shorter records over the cut:
// a replay that wrote the cut records back would show them past the new
// ones or in place of them.
var truncateScript = slices.Concat(
	appends("a", 5, 60),
	[]crashRound{{kind: opTruncate, at: 2}},
	appends("b", 4, 5),
)

// TestCrashTruncateAtEveryStep: a cut record never comes back, whatever
// step the process dies before.
func TestCrashTruncateAtEveryStep(t *testing.T) {
	const nlogs = 2
	killEveryStep(t, nlogs, func(fsys durable.FS, root string, models []*logModel) bool {
		return phase1Life(fsys, root, models, truncateScript, nil)
	}, phase1Opener(nlogs))
}

// segmentOpts are the segmented logs' options over a journal.
func segmentOpts(j *wal.FS) segment.Options {
	return segment.Options{Log: log.Options{FS: j}, SegmentBytes: segment.MinSegmentBytes, IndexInterval: 100}
}

// segmentJournalOpts journal every segment file.
var segmentJournalOpts = wal.Options{GenerationBytes: crashGenerationBytes, CheckpointBytes: crashCheckpointBytes, Journaled: func(path string) bool {
	_, ok := segment.ParseSegmentFileName(filepath.Base(path))
	return ok
}}

func segmentDir(root string, i int) string { return filepath.Join(root, fmt.Sprintf("s%d", i)) }

// segmentScript rolls each log twice (frames of about 320 bytes in
// segments of 1 KiB: offsets 0-2, 3-5, 6), deletes the first segment and
// persists a start inside the second, cuts across segments (the third
// goes, the second is cut), appends, resets past the end and appends
// again.
var segmentScript = slices.Concat(
	appends("a", 7, 280),
	[]crashRound{{kind: opAdvanceStart, at: 4}, {kind: opTruncate, at: 5}},
	appends("b", 1, 10),
	[]crashRound{{kind: opResetTo, at: 30}},
	appends("c", 1, 10),
)

// segmentLife is phase1Life for segmented logs.
func segmentLife(fsys durable.FS, root string, models []*logModel) bool {
	opts := segmentJournalOpts
	j, err := wal.Open(fsys, root, opts)
	if err != nil {
		return false
	}
	ok := true
	var logs []*segment.Log
	for i := range models {
		l, err := segment.Open(segmentDir(root, i), segmentOpts(j))
		if err != nil {
			ok = false
			break
		}
		logs = append(logs, l)
	}
	for _, r := range segmentScript {
		if !ok {
			break
		}
		ok = runRound(logs, models, r, func(l *segment.Log, i int) error {
			switch r.kind {
			case opAppend:
				_, err := l.Append([]byte(r.payload(i)))
				return err
			case opTruncate:
				return l.Truncate(r.at)
			case opAdvanceStart:
				_, err := l.AdvanceStart(r.at)
				return err
			case opResetTo:
				return l.ResetTo(r.at)
			}
			panic("unknown op")
		})
	}
	for _, l := range logs {
		ok = l.Close() == nil && ok
	}
	return j.Close() == nil && ok
}

// openSegments is openPhase1 for segmented logs.
func openSegments(n int) func(t *testing.T, fsys durable.FS, root string) ([]seenLog, func()) {
	return func(t *testing.T, fsys durable.FS, root string) ([]seenLog, func()) {
		t.Helper()
		j, err := wal.Open(fsys, root, segmentJournalOpts)
		require.NoError(t, err, "the journal opens and replays")
		var logs []*segment.Log
		var got []seenLog
		for i := range n {
			l, err := segment.Open(segmentDir(root, i), segmentOpts(j))
			require.NoError(t, err, "log %d opens after replay", i)
			logs = append(logs, l)
			s := seenLog{start: l.LogStart(), payloads: []string{}}
			for next := s.start; next < l.NextOffset(); {
				recs, err := l.Read(next, 1000)
				require.NoError(t, err)
				require.NotEmpty(t, recs)
				for _, r := range recs {
					require.Equal(t, next, r.Offset, "offsets are dense")
					s.payloads = append(s.payloads, string(r.Payload))
					next++
				}
			}
			got = append(got, s)
		}
		return got, func() {
			for _, l := range logs {
				require.NoError(t, l.Close())
			}
			require.NoError(t, j.Close())
		}
	}
}

// TestCrashSegmentedLogAtEveryStep: a segmented log rolling through the
// journal, with AdvanceStart, a cut across segments and ResetTo, the
// process killed before each step. (One log: the phase-1 tests above
// share the journal between logs.)
func TestCrashSegmentedLogAtEveryStep(t *testing.T) {
	const nlogs = 1
	killEveryStep(t, nlogs, segmentLife, openSegments(nlogs))
}

// TestCrashDuringReplay: a first life leaves a journal behind (killed
// after its last append, or inside a checkpoint, with two generations
// left); a second life's replay of it is killed before each of its steps;
// a third open, after a restart or a power loss, shows what the first was
// told: replay can be cut anywhere and run again.
func TestCrashDuringReplay(t *testing.T) {
	const nlogs = 2
	type leftover struct {
		image  string
		models []*logModel
	}
	var cases []leftover

	// Killed after its last op, before closing: the journal holds the
	// writes since the last checkpoint.
	{
		root := t.TempDir()
		c, err := logtest.NewCrashFS(root)
		require.NoError(t, err)
		f := logtest.NewFaultFS(c)
		models := newModels(nlogs)
		phase1Life(f, root, models, truncateScript, func() { f.SetFault(logtest.DieBefore(1)) })
		image := filepath.Join(t.TempDir(), "image")
		require.NoError(t, c.Crash(image))
		require.Positive(t, countGenerations(t, image))
		cases = append(cases, leftover{image, models})
	}
	// Killed inside a checkpoint, after the next generation was created
	// and before the old one was removed.
	for n := 1; n <= maxSteps; n++ {
		root := t.TempDir()
		models := newModels(nlogs)
		done := false
		c, err := logtest.KillBefore(root, n, func(fsys durable.FS) { done = phase1Life(fsys, root, models, truncateScript, nil) })
		require.NoError(t, err)
		require.False(t, done, "no step of the life leaves two generations")
		image := filepath.Join(t.TempDir(), "image")
		require.NoError(t, c.Crash(image))
		if countGenerations(t, image) >= 2 {
			cases = append(cases, leftover{image, models})
			break
		}
	}
	require.Len(t, cases, 2)

	for k, lo := range cases {
		replayed := false
		for n := 1; n <= maxSteps && !replayed; n++ {
			t.Run(fmt.Sprintf("journal %d, replay dies before step %d", k, n), func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "root")
				require.NoError(t, os.CopyFS(root, os.DirFS(lo.image)))
				c, err := logtest.KillBefore(root, n, func(fsys durable.FS) {
					j, err := wal.Open(fsys, root, phase1Opts)
					if err == nil {
						replayed = j.Close() == nil
					}
				})
				require.NoError(t, err)
				requireRecovers(t, c, lo.models, phase1Opener(nlogs))
			})
			if t.Failed() {
				return
			}
		}
		require.True(t, replayed)
	}
}

// countGenerations counts the generation files of the journal under root;
// none when it has no journal directory.
func countGenerations(t *testing.T, root string) int {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, wal.DirName)); os.IsNotExist(err) {
		return 0
	}
	return len(generations(t, root))
}
