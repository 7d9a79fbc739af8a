package log_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// TestTruncateDropsTail pins Truncate
// (docs/phase-1-log.md § Replica operations): every record with offset >= end
// is durably dropped (a reopen shows it), and appends continue at end.
func TestTruncateDropsTail(t *testing.T) {
	for _, end := range []uint64{0, 1, 2} {
		path := logPath(t)
		l, err := log.Open(path)
		require.NoError(t, err)
		recs, err := l.AppendBatch([][]byte{[]byte("a"), []byte("bb"), []byte("ccc")})
		require.NoError(t, err)

		require.NoError(t, l.Truncate(end))
		require.Equal(t, end, l.NextOffset())
		requireRecords(t, recs[:end], readAll(t, l))
		require.Equal(t, string(encodeAll(recs[:end])), string(readFile(t, path)))
		empty, err := l.Read(end, 10)
		require.NoError(t, err)
		require.Empty(t, empty)

		r, err := l.Append([]byte("new"))
		require.NoError(t, err)
		require.Equal(t, end, r.Offset)
		require.NoError(t, l.Close())

		l = openLog(t, path, log.Options{})
		requireRecords(t, append(append([]log.Record{}, recs[:end]...), r), readAll(t, l))
	}
}

// TestTruncateBounds: an end past NextOffset is refused and an end equal to
// it changes nothing.
func TestTruncateBounds(t *testing.T) {
	path := logPath(t)
	l := openLog(t, path, log.Options{})
	_, err := l.AppendBatch([][]byte{[]byte("a"), []byte("b")})
	require.NoError(t, err)
	before := readFile(t, path)

	require.ErrorIs(t, l.Truncate(3), log.ErrInvalidArgument)
	require.NoError(t, l.Truncate(2))
	require.Equal(t, before, readFile(t, path))
	require.Equal(t, uint64(2), l.NextOffset())
	_, err = l.Append([]byte("c"))
	require.NoError(t, err, "a refused truncate does not fail the log")
}
