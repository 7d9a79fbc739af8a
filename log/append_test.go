package log_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
)

// TestLogAppendAssignsOffsetsAndTimestamps pins that offsets start at 0 and
// grow by one (docs/design.md § Record frame); the timestamp is the wall
// clock at the append (docs/design.md § Timestamps); empty payloads are
// allowed; the record is in the file before Append returns.
func TestLogAppendAssignsOffsetsAndTimestamps(t *testing.T) {
	path := logPath(t)
	l := openLog(t, path, log.Options{Now: clock(goldenStart)})
	var want []log.Record
	for i, p := range [][]byte{[]byte("a"), nil, {}, []byte("dd")} {
		r, err := l.Append(p)
		require.NoError(t, err)
		require.Equal(t, uint64(i), r.Offset)
		require.Equal(t, goldenStart+int64(i)*1e9, r.Timestamp)
		require.Equal(t, len(p), len(r.Payload))
		require.Equal(t, uint64(i+1), l.NextOffset())
		want = append(want, log.Record{Offset: r.Offset, Timestamp: r.Timestamp, Payload: append([]byte{}, p...)})
		require.Equal(t, encodeAll(want), readFile(t, path), "the frame is in the file when Append returns")
	}
	require.Equal(t, want, readAll(t, l))
	require.Equal(t, int64(len(readFile(t, path))), l.Size())
	require.Equal(t, path, l.Path())
}

// TestLogAppendPayloadIsCopied: the log keeps its own copy of a payload, and
// the records Append and Read return are the caller's to modify.
func TestLogAppendPayloadIsCopied(t *testing.T) {
	l := openLog(t, logPath(t), log.Options{})
	p := []byte("original")
	r, err := l.Append(p)
	require.NoError(t, err)
	copy(p, "CHANGED!")
	copy(r.Payload, "changed!")
	_, err = l.Append([]byte("second"))
	require.NoError(t, err)

	recs, err := l.Read(0, 2)
	require.NoError(t, err)
	require.Equal(t, "original", string(recs[0].Payload))
	// Growing one returned payload must not clobber the next record.
	grown := append(recs[0].Payload, "+more"...)
	require.Equal(t, "original+more", string(grown))
	require.Equal(t, "second", string(recs[1].Payload))
	copy(recs[1].Payload, "XXXXXX")

	again, err := l.Read(0, 2)
	require.NoError(t, err)
	require.Equal(t, "original", string(again[0].Payload))
	require.Equal(t, "second", string(again[1].Payload))

	batch, err := l.AppendBatch([][]byte{[]byte("b0"), []byte("b1")})
	require.NoError(t, err)
	_ = append(batch[0].Payload, "zz"...)
	require.Equal(t, "b1", string(batch[1].Payload))
}

// TestLogAppendPayloadTooLarge: a payload above the configured maximum is
// refused with ErrPayloadTooLarge and nothing is written; the maximum is
// configurable and validated.
func TestLogAppendPayloadTooLarge(t *testing.T) {
	path := logPath(t)
	l := openLog(t, path, log.Options{MaxPayloadSize: 10})
	require.Equal(t, 10, l.MaxPayloadSize())
	_, err := l.Append(make([]byte, 10))
	require.NoError(t, err)
	size := l.Size()

	_, err = l.Append(make([]byte, 11))
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)
	_, err = l.AppendBatch([][]byte{[]byte("ok"), make([]byte, 11)})
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)
	require.ErrorIs(t, l.AppendRecord(log.Record{Offset: 1, Payload: make([]byte, 11)}), log.ErrPayloadTooLarge)
	require.Equal(t, uint64(1), l.NextOffset())
	require.Equal(t, size, l.Size())
	require.Equal(t, size, int64(len(readFile(t, path))), "nothing was written")

	def := openLog(t, filepath.Join(t.TempDir(), "d.bin"), log.Options{})
	require.Equal(t, log.DefaultMaxPayloadSize, def.MaxPayloadSize())
	_, err = def.Append(make([]byte, log.DefaultMaxPayloadSize+1))
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)

	for _, bad := range []int{-1, log.MaxFramePayload + 1} {
		_, err := log.OpenWithOptions(filepath.Join(t.TempDir(), "x.bin"), log.Options{MaxPayloadSize: bad})
		require.ErrorIs(t, err, log.ErrInvalidArgument)
	}
}

// TestLogAppendBatch: AppendBatch stores consecutive records with one write
// and one fsync (docs/phase-1-log.md § Group commit); an empty batch writes nothing.
func TestLogAppendBatch(t *testing.T) {
	path := logPath(t)
	ffs := logtest.NewFaultFS(nil)
	l := openLog(t, path, log.Options{FS: ffs, Now: clock(goldenStart)})
	_, err := l.Append([]byte("first"))
	require.NoError(t, err)

	writes, syncs := ffs.Count(logtest.OpWrite), ffs.Count(logtest.OpSync)
	recs, err := l.AppendBatch([][]byte{[]byte("x"), {}, []byte("zzz")})
	require.NoError(t, err)
	require.Equal(t, writes+1, ffs.Count(logtest.OpWrite))
	require.Equal(t, syncs+1, ffs.Count(logtest.OpSync))
	for i, r := range recs {
		require.Equal(t, uint64(1+i), r.Offset)
		require.Equal(t, goldenStart+int64(1e9), r.Timestamp, "a batch shares one timestamp")
	}
	require.Equal(t, uint64(4), l.NextOffset())
	all := readAll(t, l)
	require.Equal(t, recs, all[1:])

	size := l.Size()
	recs, err = l.AppendBatch(nil)
	require.NoError(t, err)
	require.Empty(t, recs)
	recs, err = l.AppendBatch([][]byte{})
	require.NoError(t, err)
	require.Empty(t, recs)
	require.Equal(t, size, l.Size())
	require.Equal(t, writes+1, ffs.Count(logtest.OpWrite), "an empty batch writes nothing")
}

// TestLogAppendRecords pins AppendRecord
// (docs/phase-1-log.md § Replica operations): a follower stores records with
// their leader's offsets and timestamps; an offset other than the next one
// writes nothing and wraps ErrOffsetMismatch.
func TestLogAppendRecords(t *testing.T) {
	path := logPath(t)
	l := openLog(t, path, log.Options{})
	require.NoError(t, l.AppendRecord(log.Record{Offset: 0, Timestamp: 42, Payload: []byte("r0")}))
	require.NoError(t, l.AppendRecords([]log.Record{
		{Offset: 1, Timestamp: -7, Payload: []byte("r1")},
		{Offset: 2, Timestamp: 9, Payload: nil},
	}))
	want := []log.Record{
		{Offset: 0, Timestamp: 42, Payload: []byte("r0")},
		{Offset: 1, Timestamp: -7, Payload: []byte("r1")},
		{Offset: 2, Timestamp: 9, Payload: []byte{}},
	}
	require.Equal(t, want, readAll(t, l))
	before := readFile(t, path)

	for _, bad := range [][]log.Record{
		{{Offset: 2}},
		{{Offset: 4}},
		{{Offset: 3}, {Offset: 5}},
		{{Offset: 3}, {Offset: 3}},
	} {
		require.ErrorIs(t, l.AppendRecords(bad), log.ErrOffsetMismatch)
	}
	require.ErrorIs(t, l.AppendRecord(log.Record{Offset: 0}), log.ErrOffsetMismatch)
	require.NoError(t, l.AppendRecords(nil))
	require.Equal(t, before, readFile(t, path), "a refused record changes nothing on disk")
	require.Equal(t, uint64(3), l.NextOffset())

	// Appends continue after replicated records.
	r, err := l.Append([]byte("own"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), r.Offset)
}

// TestLogRead pins Read (docs/phase-1-log.md § The API): up to maxRecords from
// start, empty past the end, an error for maxRecords < 1.
func TestLogRead(t *testing.T) {
	l := openLog(t, logPath(t), log.Options{})
	for _, p := range []string{"a", "b", "c", "d"} {
		_, err := l.Append([]byte(p))
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		start uint64
		max   int
		want  string
	}{
		{0, 1, "a"},
		{0, 4, "abcd"},
		{0, 100, "abcd"},
		{1, 2, "bc"},
		{3, 1 << 40, "d"},
		{4, 10, ""},
		{1 << 63, 10, ""},
	} {
		recs, err := l.Read(tc.start, tc.max)
		require.NoError(t, err)
		got := ""
		for i, r := range recs {
			require.Equal(t, tc.start+uint64(i), r.Offset)
			got += string(r.Payload)
		}
		require.Equal(t, tc.want, got, "Read(%d, %d)", tc.start, tc.max)
	}
	for _, bad := range []int{0, -1} {
		_, err := l.Read(0, bad)
		require.ErrorIs(t, err, log.ErrInvalidArgument)
	}
}

// TestLogClose: every operation after Close returns ErrClosed, and closing
// twice is harmless.
func TestLogClose(t *testing.T) {
	l, err := log.Open(logPath(t))
	require.NoError(t, err)
	_, err = l.Append([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.NoError(t, l.Close())

	_, err = l.Append([]byte("y"))
	require.ErrorIs(t, err, log.ErrClosed)
	_, err = l.AppendBatch([][]byte{[]byte("y")})
	require.ErrorIs(t, err, log.ErrClosed)
	_, err = l.AppendBatch(nil)
	require.ErrorIs(t, err, log.ErrClosed)
	require.ErrorIs(t, l.AppendRecord(log.Record{Offset: 1}), log.ErrClosed)
	require.ErrorIs(t, l.AppendRecords(nil), log.ErrClosed)
	_, err = l.Read(0, 1)
	require.ErrorIs(t, err, log.ErrClosed)
	require.ErrorIs(t, l.Truncate(0), log.ErrClosed)
}

// TestLogOpenCreates pins docs/design.md § Invariants, 1: Open creates missing
// parent directories and the file, fsyncing the directory of every new entry,
// and the parent of the deepest directory that existed (an earlier process may
// have died before syncing it). Reopening an existing log creates and writes
// nothing, but fsyncs the file and its directory: the process that wrote it may
// have died before either sync.
func TestLogOpenCreates(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a", "b", "log.bin")
	ffs := logtest.NewFaultFS(nil)
	var synced []string
	record := func(op logtest.Op, p string) error {
		if op == logtest.OpSync || op == logtest.OpSyncDir {
			synced = append(synced, string(op)+" "+p)
		}
		return nil
	}
	ffs.SetFault(record)
	l := openLog(t, path, log.Options{FS: ffs})
	require.Zero(t, l.NextOffset())
	require.Equal(t, 2, ffs.Count(logtest.OpMkdir))
	sd := func(p string) string { return string(logtest.OpSyncDir) + " " + p }
	require.Equal(t, []string{
		sd(filepath.Dir(root)), sd(root), sd(filepath.Join(root, "a")), sd(filepath.Join(root, "a", "b")),
	}, synced, "root's parent (root existed), then root, a and b after a, b and log.bin appear")
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, info.Mode().IsRegular())

	require.NoError(t, l.Close())
	ffs2 := logtest.NewFaultFS(nil)
	synced = nil
	ffs2.SetFault(record)
	openLog(t, path, log.Options{FS: ffs2})
	require.Zero(t, ffs2.Count(logtest.OpMkdir)+ffs2.Count(logtest.OpWrite)+ffs2.Count(logtest.OpTruncate))
	require.Equal(t, []string{string(logtest.OpSync) + " " + path, sd(filepath.Join(root, "a", "b"))}, synced)
}

// TestLogOpenRejectsNonFile: a directory where the log should be is an
// error, not an empty log.
func TestLogOpenRejectsNonFile(t *testing.T) {
	dir := t.TempDir()
	_, err := log.Open(dir)
	require.Error(t, err)
	file := filepath.Join(dir, "file")
	writeFile(t, file, nil)
	_, err = log.Open(filepath.Join(file, "log.bin"))
	require.Error(t, err, "a parent that is a file")
}
