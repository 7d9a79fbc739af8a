package log_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
)

// TestRepairTornTail pins docs/design.md § Torn tail: Repair keeps a copy of
// the damaged file (log.bin.broken-<unix-ns>) with its original bytes, cuts
// only the torn tail, and fsyncs the file and the directory.
func TestRepairTornTail(t *testing.T) {
	path := logPath(t)
	damaged := cat(frame0, frame1, frame2[:log.HeaderSize+1])
	writeFile(t, path, damaged)
	ffs := logtest.NewFaultFS(nil)
	now := time.Unix(0, 1_234_567_890_123)

	res, err := log.RepairWithOptions(path, log.Options{FS: ffs, Now: func() time.Time { return now }})
	require.NoError(t, err)
	end := int64(len(frame0) + len(frame1))
	require.Equal(t, log.RepairResult{
		Repaired: true,
		Backup:   path + ".broken-" + strconv.FormatInt(now.UnixNano(), 10),
		End:      end,
		Removed:  int64(len(damaged)) - end,
	}, res)
	require.Equal(t, damaged, readFile(t, res.Backup), "the backup holds the original bytes")
	require.Equal(t, cat(frame0, frame1), readFile(t, path), "only the torn tail is cut")
	require.Equal(t, 1, ffs.Count(logtest.OpTruncate))
	require.Equal(t, 2, ffs.Count(logtest.OpSync), "backup and log are both fsync-ed")
	require.GreaterOrEqual(t, ffs.Count(logtest.OpSyncDir), 2, "the backup's entry and the cut are made durable")

	l := openLog(t, path, log.Options{})
	requireRecords(t, threeRecords()[:2], readAll(t, l))
}

// TestRepairRefusesOtherDamage: any damage that is not a torn tail is
// refused with ErrNotTornTail and the *CorruptionError, and nothing on disk
// changes: no cut, no backup (docs/design.md § Torn tail,
// docs/design.md § Invariants, 3).
func TestRepairRefusesOtherDamage(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"lengths disagree", cat(frame0, withRecordLength(frame1, 23))},
		{"offset gap", cat(frame0, frame2)},
		{"first offset not 0", frame1},
		{"garbage", cat(frame0, []byte("this is not a frame at all, just text"))},
		{"zeros followed by a record", cat(frame0, make([]byte, 30), frame2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "log.bin")
			writeFile(t, path, tc.data)
			ffs := logtest.NewFaultFS(nil)
			res, err := log.RepairWithOptions(path, log.Options{FS: ffs})
			require.ErrorIs(t, err, log.ErrNotTornTail)
			var cerr *log.CorruptionError
			require.True(t, errors.As(err, &cerr))
			require.False(t, cerr.TornTail)
			require.Equal(t, log.RepairResult{}, res)
			require.Equal(t, tc.data, readFile(t, path))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "no backup is kept of a log that is not repaired")
			require.Zero(t, ffs.Count(logtest.OpWrite)+ffs.Count(logtest.OpTruncate)+ffs.Count(logtest.OpSync))
		})
	}
}

// TestRepairWholeLogIsNoop: Repair of an undamaged log does nothing at all.
func TestRepairWholeLogIsNoop(t *testing.T) {
	for _, data := range [][]byte{nil, cat(frame0, frame1, frame2)} {
		dir := t.TempDir()
		path := filepath.Join(dir, "log.bin")
		writeFile(t, path, data)
		res, err := log.Repair(path)
		require.NoError(t, err)
		require.Equal(t, log.RepairResult{}, res)
		require.Equal(t, len(data), len(readFile(t, path)))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1)
	}
}

// TestRepairMissingFile: Repair never creates a log.
func TestRepairMissingFile(t *testing.T) {
	path := logPath(t)
	_, err := log.Repair(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestRepairFailures: when a step of Repair fails, it reports the error; a
// failed copy leaves the log untouched and no partial backup behind.
func TestRepairFailures(t *testing.T) {
	damaged := cat(frame0, frame1[:5])
	for _, tc := range []struct {
		op     logtest.Op
		n      int
		intact bool // the log still holds its damaged bytes
	}{
		{logtest.OpWrite, 1, true},
		{logtest.OpSync, 1, true},
		{logtest.OpSyncDir, 1, true},
		{logtest.OpTruncate, 1, true},
		{logtest.OpSync, 2, false},
		{logtest.OpSyncDir, 2, false},
	} {
		t.Run(string(tc.op)+strconv.Itoa(tc.n), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "log.bin")
			writeFile(t, path, damaged)
			ffs := logtest.NewFaultFS(nil)
			ffs.SetFault(logtest.FailNth(tc.op, tc.n))
			_, err := log.RepairWithOptions(path, log.Options{FS: ffs})
			require.ErrorIs(t, err, logtest.ErrInjected)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			if tc.intact {
				require.Equal(t, damaged, readFile(t, path))
			} else {
				require.Equal(t, frame0, readFile(t, path))
			}
			if tc.op == logtest.OpWrite || tc.op == logtest.OpSync && tc.n == 1 || tc.op == logtest.OpSyncDir && tc.n == 1 {
				require.Len(t, entries, 1, "a failed copy is removed")
			} else {
				require.Len(t, entries, 2, "the backup is kept once it is durable")
			}
		})
	}
}
