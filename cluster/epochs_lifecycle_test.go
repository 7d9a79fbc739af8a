package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// historyOf opens a fresh history in a temporary directory holding runs,
// taken as a follower from offset 0.
func historyOf(t *testing.T, runs []EpochRun) *epochHistory {
	t.Helper()
	h, err := openEpochHistory(durable.OS, t.TempDir(), 0, 0, t.Logf)
	require.NoError(t, err)
	if len(runs) > 0 {
		require.NoError(t, h.follow(0, runs))
	}
	return h
}

// TestEpochHistoryFollowSameRunCopiesNothing checks the cost of a follower's every
// batch: records of the run its history already ends in change nothing,
// and neither copy the history nor write it.
func TestEpochHistoryFollowSameRunCopiesNothing(t *testing.T) {
	var runs []EpochRun
	for i := uint64(0); i < 100; i++ {
		runs = append(runs, EpochRun{Epoch: i + 1, ID: i + 1, Start: i * 10})
	}
	h := historyOf(t, runs)
	end := uint64(2000)
	last := []EpochRun{runs[len(runs)-1]}
	allocs := testing.AllocsPerRun(100, func() {
		require.NoError(t, h.follow(end, last))
		end += 10
	})
	require.Zero(t, allocs)
	require.Equal(t, runs, h.snapshot())
}

// TestEpochHistoryFollowAfterTrimWrites checks that the shortcut of a follower's
// batch does not skip the write a trimmed history owes, nor a new run.
func TestEpochHistoryFollowAfterTrimWrites(t *testing.T) {
	r1, r2 := EpochRun{Epoch: 1, ID: 1, Start: 0}, EpochRun{Epoch: 2, ID: 2, Start: 50}
	h := historyOf(t, []EpochRun{r1, r2})
	h.mu.Lock()
	h.trimLocked(50)
	h.mu.Unlock()
	require.NoError(t, h.follow(50, []EpochRun{r1}))
	data, err := durable.ReadSmallFile(durable.OS, h.path, MaxEpochsFileSize)
	require.NoError(t, err)
	got, err := ParseEpochsFile(data)
	require.NoError(t, err)
	require.Equal(t, []EpochRun{r1}, got)

	r3 := EpochRun{Epoch: 3, ID: 3, Start: 40}
	require.NoError(t, h.follow(60, []EpochRun{r3}))
	require.Equal(t, []EpochRun{r1, {Epoch: 3, ID: 3, Start: 60}}, h.snapshot())
}

// racingFS renames the history aside itself just before its caller does,
// as a concurrent first open of the same replica would.
type racingFS struct {
	durable.FS
	path string
}

func (f racingFS) Rename(oldpath, newpath string) error {
	if oldpath == f.path {
		if err := f.FS.Rename(oldpath, oldpath+".damaged-other"); err != nil {
			return err
		}
	}
	return f.FS.Rename(oldpath, newpath)
}

// TestEpochHistoryOpenDamagedTwice checks that two first opens of one replica
// that both find its history damaged both open it: the one whose setting
// aside finds the file gone (the other set it aside) does not fail.
func TestEpochHistoryOpenDamagedTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EpochsFileName)
	require.NoError(t, os.WriteFile(path, []byte("not a history\n"), 0o644))
	h, err := openEpochHistory(racingFS{FS: durable.OS, path: path}, dir, 0, 10, t.Logf)
	require.NoError(t, err)
	require.Empty(t, h.snapshot())
}

// TestEpochHistoryLeadStartsARunPerOpeningAndCut pins the rule the
// comparison rests on: a leader never writes an offset twice in one run.
// It starts a run at a new epoch, after its log was cut, and after its log
// was opened again, even at the same epoch.
func TestEpochHistoryLeadStartsARunPerOpeningAndCut(t *testing.T) {
	dir := t.TempDir()
	h, err := openEpochHistory(durable.OS, dir, 0, 0, t.Logf)
	require.NoError(t, err)
	require.NoError(t, h.lead(5, 0))
	require.NoError(t, h.lead(5, 10))
	first := h.snapshot()
	require.Len(t, first, 1)

	require.NoError(t, h.truncate(6)) // the run still holds 0..5
	require.NoError(t, h.lead(5, 6))
	afterCut := h.snapshot()
	require.Len(t, afterCut, 2)
	require.False(t, sameRun(afterCut[0], afterCut[1]))
	require.Equal(t, uint64(6), afterCut[1].Start)

	// Opened again with records 6..7 (unsynced 8.. lost): the runs stay,
	// the next append at epoch 5 is a run of its own.
	h2, err := openEpochHistory(durable.OS, dir, 0, 8, t.Logf)
	require.NoError(t, err)
	require.Equal(t, afterCut, h2.snapshot())
	require.NoError(t, h2.lead(5, 8))
	reopened := h2.snapshot()
	require.Len(t, reopened, 3)
	require.False(t, sameRun(reopened[1], reopened[2]))

	require.NoError(t, h2.lead(6, 20))
	require.Len(t, h2.snapshot(), 4)
}

// TestEpochHistoryOpenDropsARunWrittenJustBeforeACrash checks that a run written down
// before records that never reached the log (a crash between the two)
// holds nothing after opening, and that the file follows before the next
// append.
func TestEpochHistoryOpenDropsARunWrittenJustBeforeACrash(t *testing.T) {
	dir := t.TempDir()
	a, b := EpochRun{Epoch: 1, ID: 1, Start: 0}, EpochRun{Epoch: 2, ID: 2, Start: 10}
	require.NoError(t, durable.WriteFile(durable.OS, filepath.Join(dir, EpochsFileName), EncodeEpochsFile([]EpochRun{a, b})))
	h, err := openEpochHistory(durable.OS, dir, 0, 10, t.Logf)
	require.NoError(t, err)
	require.Equal(t, []EpochRun{a}, h.snapshot())
	require.NoError(t, h.follow(10, []EpochRun{a}))
	data, err := durable.ReadSmallFile(durable.OS, h.path, MaxEpochsFileSize)
	require.NoError(t, err)
	got, err := ParseEpochsFile(data)
	require.NoError(t, err)
	require.Equal(t, []EpochRun{a}, got)
}

// TestEpochHistoryWritesNothingOnceItsReplicaIsClosed: a history found
// before its broker closed, its topic was dropped or its log was reopened
// (a follower's batch in flight) writes nothing afterwards. A late write
// would land in the file a new opening of the replica has already read,
// naming a run the log it describes does not hold.
func TestEpochHistoryWritesNothingOnceItsReplicaIsClosed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close func(b *Broker)
	}{
		{"broker closed", func(b *Broker) { require.NoError(t, b.Close()) }},
		{"topic dropped", func(b *Broker) { b.dropTopic("t") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := OpenBroker(1, t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			_, err = b.replica("t", 0, true)
			require.NoError(t, err)
			h, err := b.epochsOf("t", 0)
			require.NoError(t, err)
			require.NoError(t, h.follow(0, []EpochRun{epA}))
			tc.close(b)
			require.ErrorIs(t, h.follow(0, []EpochRun{{Epoch: 9, ID: 42, Start: 0}}), log.ErrClosed)
			require.ErrorIs(t, h.lead(9, 0), log.ErrClosed)
			require.ErrorIs(t, h.truncate(0), log.ErrClosed)
			require.Equal(t, []EpochRun{epA}, readEpochsFile(t, b.ReplicaDir("t", 0)))
		})
	}
}

// A history that would outgrow what a reader accepts loses its oldest
// runs, not its newest, and stays readable: the records of the runs it
// lost count as unknown.
func TestEpochHistoryStaysUnderTheReadLimit(t *testing.T) {
	dir := t.TempDir()
	var runs []EpochRun
	for i := range 40_000 {
		runs = append(runs, EpochRun{Epoch: uint64(i), ID: uint64(i) + 1, Start: uint64(i) * 10})
	}
	require.Greater(t, len(EncodeEpochsFile(runs)), MaxEpochsFileSize)
	h, err := openEpochHistory(durable.OS, dir, 0, 400_000, t.Logf)
	require.NoError(t, err)
	h.runs = runs
	next := EpochRun{Epoch: 50_000, ID: 0xabc, Start: 400_000}
	require.NoError(t, h.follow(400_000, []EpochRun{next}))
	data, err := os.ReadFile(filepath.Join(dir, EpochsFileName))
	require.NoError(t, err)
	require.LessOrEqual(t, len(data), MaxEpochsFileSize)
	got, err := ParseEpochsFile(data)
	require.NoError(t, err)
	require.Equal(t, next, got[len(got)-1])
	require.Equal(t, runs[len(runs)-len(got)+1:], got[:len(got)-1], "the newest runs are kept")
	require.Equal(t, EpochRun{}, runAt(h.snapshot(), 0), "what the oldest runs held is unknown now")
	reopened, err := openEpochHistory(durable.OS, dir, 0, 400_001, t.Logf)
	require.NoError(t, err)
	require.Equal(t, got, reopened.snapshot())
}
