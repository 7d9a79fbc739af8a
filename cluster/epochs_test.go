package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

// historyOf opens a fresh history in a temporary directory holding runs,
// taken as a follower from offset 0.
func historyOf(t *testing.T, runs []EpochRun) *epochHistory {
	t.Helper()
	h, err := openEpochHistory(durable.OS, t.TempDir(), 0, t.Logf)
	require.NoError(t, err)
	if len(runs) > 0 {
		require.NoError(t, h.follow(0, runs))
	}
	return h
}

// TestFollowSameRunCopiesNothing checks the cost of a follower's every
// batch: records of the run its history already ends in change nothing,
// and neither copy the history nor write it.
func TestFollowSameRunCopiesNothing(t *testing.T) {
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

// TestFollowAfterTrimWrites checks that the shortcut of a follower's
// batch does not skip the write a trimmed history owes, nor a new run.
func TestFollowAfterTrimWrites(t *testing.T) {
	r1, r2 := EpochRun{Epoch: 1, ID: 1, Start: 0}, EpochRun{Epoch: 2, ID: 2, Start: 50}
	h := historyOf(t, []EpochRun{r1, r2})
	h.mu.Lock()
	h.trimLocked(50)
	h.mu.Unlock()
	require.NoError(t, h.follow(50, []EpochRun{r1}))
	data, err := durable.ReadSmallFile(durable.OS, h.path, maxEpochsFileSize)
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

// TestOpenDamagedHistoryTwice checks that two first opens of one replica
// that both find its history damaged both open it: the one whose setting
// aside finds the file gone (the other set it aside) does not fail.
func TestOpenDamagedHistoryTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EpochsFileName)
	require.NoError(t, os.WriteFile(path, []byte("not a history\n"), 0o644))
	h, err := openEpochHistory(racingFS{FS: durable.OS, path: path}, dir, 10, t.Logf)
	require.NoError(t, err)
	require.Empty(t, h.snapshot())
}
