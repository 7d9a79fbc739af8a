package wal_test

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
	"github.com/pystream/pystream/log/wal"
)

// journaledLogs is the predicate of these tests: every log.bin below the
// root goes through the journal.
func journaledLogs(path string) bool { return filepath.Base(path) == log.FileName }

// TestCrashAfterCommitKeepsEveryAcknowledgedRecord appends to several
// phase-1 logs through one journal, takes the durable image a power loss
// would leave, and opens it: replay must bring back every record an
// append acknowledged, though no segment file was ever fsync-ed.
func TestCrashAfterCommitKeepsEveryAcknowledgedRecord(t *testing.T) {
	crash, err := logtest.NewCrashFS(t.TempDir())
	require.NoError(t, err)
	j, err := wal.Open(crash, crash.Root(), wal.Options{Journaled: journaledLogs})
	require.NoError(t, err)
	var paths []string
	var logs []*log.Log
	for i := range 4 {
		p := filepath.Join(crash.Root(), fmt.Sprintf("p%d", i), log.FileName)
		l, err := log.OpenWithOptions(p, log.Options{FS: j})
		require.NoError(t, err)
		paths, logs = append(paths, p), append(logs, l)
	}
	for n := range 5 {
		for i, l := range logs {
			_, err := l.Append(fmt.Appendf(nil, "log %d record %d", i, n))
			require.NoError(t, err)
		}
	}
	image := t.TempDir()
	require.NoError(t, crash.Crash(image))

	for _, p := range paths {
		rel, err := filepath.Rel(crash.Root(), p)
		require.NoError(t, err)
		info, err := os.Stat(filepath.Join(image, rel))
		require.NoError(t, err)
		require.Zero(t, info.Size(), "the image holds no segment byte before replay: the journal alone made them durable")
	}
	j2, err := wal.Open(durable.OS, image, wal.Options{Journaled: journaledLogs})
	require.NoError(t, err)
	for i, p := range paths {
		rel, _ := filepath.Rel(crash.Root(), p)
		l, err := log.OpenWithOptions(filepath.Join(image, rel), log.Options{FS: j2})
		require.NoError(t, err)
		recs, err := l.Read(0, 100)
		require.NoError(t, err)
		require.Len(t, recs, 5)
		for n, r := range recs {
			require.Equal(t, fmt.Sprintf("log %d record %d", i, n), string(r.Payload))
		}
		require.NoError(t, l.Close())
	}
	require.NoError(t, j2.Close())
	left, err := os.ReadDir(filepath.Join(image, wal.DirName))
	require.NoError(t, err)
	require.Empty(t, left, "a clean close leaves nothing to replay")
	for _, l := range logs {
		require.NoError(t, l.Close())
	}
	require.NoError(t, j.Close())
}

// TestTruncateIsNeverUndoneByReplay cuts a journaled log and appends
// other records after the cut; a replay must not bring the cut records
// back.
func TestTruncateIsNeverUndoneByReplay(t *testing.T) {
	crash, err := logtest.NewCrashFS(t.TempDir())
	require.NoError(t, err)
	j, err := wal.Open(crash, crash.Root(), wal.Options{Journaled: journaledLogs})
	require.NoError(t, err)
	p := filepath.Join(crash.Root(), "p", log.FileName)
	l, err := log.OpenWithOptions(p, log.Options{FS: j})
	require.NoError(t, err)
	for n := range 4 {
		_, err := l.Append([]byte(strings.Repeat("long record ", 10) + fmt.Sprint(n)))
		require.NoError(t, err)
	}
	require.NoError(t, l.Truncate(1))
	_, err = l.Append([]byte("short"))
	require.NoError(t, err)
	image := t.TempDir()
	require.NoError(t, crash.Crash(image))

	j2, err := wal.Open(durable.OS, image, wal.Options{Journaled: journaledLogs})
	require.NoError(t, err)
	l2, err := log.OpenWithOptions(filepath.Join(image, "p", log.FileName), log.Options{FS: j2})
	require.NoError(t, err)
	recs, err := l2.Read(0, 100)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, "short", string(recs[1].Payload))
	require.NoError(t, l2.Close())
	require.NoError(t, j2.Close())
	require.NoError(t, l.Close())
	require.NoError(t, j.Close())
}
