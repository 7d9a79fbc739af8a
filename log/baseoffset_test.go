package log_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// TestLogBaseOffset pins Options.BaseOffset (doc.go § Base offset): a log
// over a file whose first frame has offset 100 numbers its records from
// 100, refuses reads and truncations below it, and reopens the same way.
func TestLogBaseOffset(t *testing.T) {
	path := logPath(t)
	opts := log.Options{BaseOffset: 100}
	l, err := log.OpenWithOptions(path, opts)
	require.NoError(t, err)
	require.Equal(t, uint64(100), l.NextOffset())
	require.Equal(t, uint64(100), l.BaseOffset())
	recs, err := l.AppendBatch([][]byte{[]byte("a"), []byte("bb"), []byte("ccc")})
	require.NoError(t, err)
	require.Equal(t, uint64(100), recs[0].Offset)
	require.Equal(t, uint64(103), l.NextOffset())
	require.NoError(t, l.AppendRecord(log.Record{Offset: 103, Timestamp: 7, Payload: []byte("d")}))
	require.ErrorIs(t, l.AppendRecord(log.Record{Offset: 3}), log.ErrOffsetMismatch)

	got, err := l.Read(101, 2)
	require.NoError(t, err)
	require.Equal(t, recs[1:3], got)
	_, err = l.Read(99, 1)
	require.ErrorIs(t, err, log.ErrInvalidArgument)
	past, err := l.Read(104, 1)
	require.NoError(t, err)
	require.Empty(t, past)
	require.ErrorIs(t, l.Truncate(99), log.ErrInvalidArgument)
	require.NoError(t, l.Truncate(102))
	require.Equal(t, uint64(102), l.NextOffset())
	require.NoError(t, l.Close())
	require.Equal(t, encodeAll(recs[:2]), readFile(t, path), "the file is plain frames with absolute offsets")

	l = openLog(t, path, opts)
	require.Equal(t, uint64(102), l.NextOffset())
	got, err = l.Read(100, 10)
	require.NoError(t, err)
	require.Equal(t, recs[:2], got)
	require.NoError(t, l.Truncate(100))
	require.Equal(t, uint64(100), l.NextOffset())
	require.NoError(t, l.Close())

	// The same frames opened with the wrong base are corrupt.
	writeFile(t, path, encodeAll(recs))
	_, err = log.Open(path)
	var cerr *log.CorruptionError
	require.ErrorAs(t, err, &cerr)
	require.False(t, cerr.TornTail)

	// Repair numbers frames from the base too.
	writeFile(t, path, append(encodeAll(recs), 0, 0, 1))
	res, err := log.RepairWithOptions(path, opts)
	require.NoError(t, err)
	require.True(t, res.Repaired)
	l = openLog(t, path, opts)
	require.Equal(t, uint64(103), l.NextOffset())
}
