package log_test

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// Three whole frames used by the recovery tests: offsets 0, 1, 2.
var (
	frame0 = handFrame(0, 100, []byte("a"))
	frame1 = handFrame(1, 200, []byte("bb"))
	frame2 = handFrame(2, 300, []byte("ccc"))
)

func threeRecords() []log.Record {
	return []log.Record{
		{Offset: 0, Timestamp: 100, Payload: []byte("a")},
		{Offset: 1, Timestamp: 200, Payload: []byte("bb")},
		{Offset: 2, Timestamp: 300, Payload: []byte("ccc")},
	}
}

// TestRecoveryReopen pins docs/phase-1-log.md § Recovery (the next offset is
// derived from the file itself): a reopened log has the same records and the
// same next offset, and appends continue after them.
func TestRecoveryReopen(t *testing.T) {
	path := logPath(t)
	l, err := log.Open(path)
	require.NoError(t, err)
	var want []log.Record
	for _, p := range []string{"one", "", "three"} {
		r, err := l.Append([]byte(p))
		require.NoError(t, err)
		want = append(want, r)
	}
	require.NoError(t, l.Close())

	l = openLog(t, path, log.Options{})
	require.Equal(t, uint64(3), l.NextOffset())
	require.Equal(t, want, readAll(t, l))
	r, err := l.Append([]byte("four"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), r.Offset)
}

func withRecordLength(frame []byte, n uint32) []byte {
	f := append([]byte(nil), frame...)
	binary.BigEndian.PutUint32(f[0:4], n)
	return f
}

// TestRecoveryCorruption pins the corruption rules of
// docs/phase-1-log.md § Recovery and docs/design.md § Torn tail: every
// damaged file is refused with a *CorruptionError that names the position,
// the offset and whether it is a torn tail, and the file is left byte for
// byte as it was.
func TestRecoveryCorruption(t *testing.T) {
	p0 := int64(len(frame0))
	for _, tc := range []struct {
		name    string
		data    []byte
		pos     int64
		offset  uint64
		torn    bool
		records int // whole records before the damage
	}{
		{"truncated header", cat(frame0, frame1[:10]), p0, 1, true, 1},
		{"truncated header of the first record", frame0[:1], 0, 0, true, 0},
		{"truncated payload", cat(frame0, frame1[:len(frame1)-1]), p0, 1, true, 1},
		{"header without payload", cat(frame0, frame1[:log.HeaderSize]), p0, 1, true, 1},
		{"record_length one too large", cat(frame0, withRecordLength(frame1, 23)), p0, 1, false, 1},
		{"record_length one too small", cat(frame0, withRecordLength(frame1, 21), frame2), p0, 1, false, 1},
		{"record_length disagrees in the last frame", cat(frame0, frame1, withRecordLength(frame2, 0)), p0 + int64(len(frame1)), 2, false, 2},
		{"first offset is not 0", handFrame(1, 0, nil), 0, 0, false, 0},
		{"offset sequence skips", cat(frame0, frame2), p0, 1, false, 1},
		{"offset sequence repeats", cat(frame0, frame0), p0, 1, false, 1},
		{"offset sequence goes back", cat(frame0, frame1, handFrame(0, 0, nil)), p0 + int64(len(frame1)), 2, false, 2},
		{"wrong offset in a frame cut short", cat(frame0, handFrame(5, 0, []byte("xyz"))[:26]), p0, 1, false, 1},
		{"garbage after a record", cat(frame0, []byte("this is not a frame at all, just text")), p0, 1, false, 1},
		{"garbage from the start", []byte("garbage garbage garbage garbage"), 0, 0, false, 0},
		{"garbage shorter than a header is a partial header", cat(frame0, []byte("junk")), p0, 1, true, 1},
		{"all-zero tail", cat(frame0, frame1, make([]byte, 100)), p0 + int64(len(frame1)), 2, true, 2},
		{"all-zero tail shorter than a header", cat(frame0, make([]byte, 7)), p0, 1, true, 1},
		{"all-zero file", make([]byte, 4096), 0, 0, true, 0},
		{"zeros followed by a record", cat(frame0, make([]byte, 30), frame2), p0, 1, false, 1},
		{"damage followed by more records", cat(frame0, withRecordLength(frame1, 99), frame2), p0, 1, false, 1},
		{"huge consistent length runs past the end", cat(frame0, hugeHeader(1)), p0, 1, true, 1},
		{"huge consistent length with bytes after it", cat(frame0, hugeHeader(1), frame2), p0, 1, true, 1},
		{"huge inconsistent lengths", cat(frame0, withRecordLength(hugeHeader(1), 5)), p0, 1, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := logPath(t)
			writeFile(t, path, tc.data)

			_, err := log.Open(path)
			cerr := requireCorruption(t, err, path, tc.pos, tc.offset, tc.torn)
			if tc.torn && int64(len(tc.data))-tc.pos < log.HeaderSize || tc.name == "truncated payload" {
				require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			}
			require.NotEmpty(t, cerr.Reason)
			require.Equal(t, tc.data, readFile(t, path), "Open must not change a damaged file")

			// ScanFile reports the same damage after the same whole records.
			var seen []log.Record
			err = log.ScanFile(path, func(_ int64, r log.Record) error {
				seen = append(seen, r)
				return nil
			})
			requireCorruption(t, err, path, tc.pos, tc.offset, tc.torn)
			requireRecords(t, threeRecords()[:tc.records], seen)
			require.Equal(t, tc.data, readFile(t, path))
		})
	}
}

func requireCorruption(t *testing.T, err error, path string, pos int64, offset uint64, torn bool) *log.CorruptionError {
	t.Helper()
	var cerr *log.CorruptionError
	require.True(t, errors.As(err, &cerr), "want *CorruptionError, got %v", err)
	require.Equal(t, path, cerr.Path)
	require.Equal(t, pos, cerr.Pos, "position: %v", err)
	require.True(t, cerr.OffsetKnown)
	require.Equal(t, offset, cerr.Offset, "offset: %v", err)
	require.Equal(t, torn, cerr.TornTail, "torn tail: %v", err)
	return cerr
}

// TestRecoveryTruncatedAtEveryByte cuts a three-record log at every byte
// offset: each prefix either opens with exactly its whole records or is a torn
// tail ending where the last whole record ends (docs/design.md § Torn tail),
// and Repair turns the latter into the former.
func TestRecoveryTruncatedAtEveryByte(t *testing.T) {
	full := cat(frame0, frame1, frame2)
	ends := []int{0, len(frame0), len(frame0) + len(frame1), len(full)}
	for n := 0; n <= len(full); n++ {
		whole := 0
		for whole+1 < len(ends) && ends[whole+1] <= n {
			whole++
		}
		path := logPath(t)
		writeFile(t, path, full[:n])
		l, err := log.Open(path)
		if n == ends[whole] {
			require.NoError(t, err, "cut at %d", n)
			require.Equal(t, uint64(whole), l.NextOffset())
			requireRecords(t, threeRecords()[:whole], readAll(t, l), "cut at %d", n)
			require.NoError(t, l.Close())
			continue
		}
		requireCorruption(t, err, path, int64(ends[whole]), uint64(whole), true)
		require.Equal(t, full[:n], readFile(t, path))

		res, err := log.Repair(path)
		require.NoError(t, err, "cut at %d", n)
		require.Equal(t, int64(ends[whole]), res.End)
		require.Equal(t, int64(n-ends[whole]), res.Removed)
		l, err = log.Open(path)
		require.NoError(t, err)
		requireRecords(t, threeRecords()[:whole], readAll(t, l), "cut at %d", n)
		require.NoError(t, l.Close())
	}
}

// TestRecoveryHugeLengthDoesNotAllocate pins docs/design.md § Record frame: a
// length field claiming a 4 GiB payload makes Open and ScanFile report a torn
// tail without allocating anything near that size.
func TestRecoveryHugeLengthDoesNotAllocate(t *testing.T) {
	path := logPath(t)
	writeFile(t, path, cat(frame0, hugeHeader(1)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := log.Open(path)
	requireCorruption(t, err, path, int64(len(frame0)), 1, true)
	err = log.ScanFile(path, nil)
	requireCorruption(t, err, path, int64(len(frame0)), 1, true)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "opening a 4 GiB length claim allocated too much")
}

// TestRecoveryEmptyFile: an empty file is an empty log.
func TestRecoveryEmptyFile(t *testing.T) {
	path := logPath(t)
	writeFile(t, path, nil)
	l := openLog(t, path, log.Options{})
	require.Zero(t, l.NextOffset())
	require.Zero(t, l.Size())
}

// TestRecoveryScanFileVisitError: ScanFile stops at the first error its
// callback returns and hands it back unchanged.
func TestRecoveryScanFileVisitError(t *testing.T) {
	path := logPath(t)
	writeFile(t, path, cat(frame0, frame1, frame2))
	stop := errors.New("stop")
	var positions []int64
	err := log.ScanFile(path, func(pos int64, r log.Record) error {
		positions = append(positions, pos)
		if r.Offset == 1 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	require.Equal(t, []int64{0, int64(len(frame0))}, positions)

	_, err = os.Stat(path + ".missing")
	require.Error(t, err)
	require.ErrorIs(t, log.ScanFile(path+".missing", nil), os.ErrNotExist)
}

// TestRecoveryScanFileFrom: a run of frames that starts past offset 0 (a
// quarantine file) scans with ScanFileFrom at its first offset, and only
// there; ScanFile still wants offset 0 first.
func TestRecoveryScanFileFrom(t *testing.T) {
	path := logPath(t)
	writeFile(t, path, cat(handFrame(5, 1, []byte("x")), handFrame(6, 2, []byte("yy"))))
	var got []log.Record
	require.NoError(t, log.ScanFileFrom(path, 5, log.Options{}, func(_ int64, r log.Record) error {
		got = append(got, r)
		return nil
	}))
	require.Equal(t, []log.Record{{Offset: 5, Timestamp: 1, Payload: []byte("x")}, {Offset: 6, Timestamp: 2, Payload: []byte("yy")}}, got)
	for _, first := range []uint64{0, 4, 6} {
		var ce *log.CorruptionError
		require.ErrorAs(t, log.ScanFileFrom(path, first, log.Options{}, nil), &ce, "first %d", first)
		require.Contains(t, ce.Reason, "first offset is 5")
	}
	var ce *log.CorruptionError
	require.ErrorAs(t, log.ScanFile(path, nil), &ce)
}
