package segment_test

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// TestSegmentReadAcrossSegments: every offset, every count, reads the
// same records as one log would, across segment boundaries and thin-index
// windows; a Read may stop at a segment's end but never returns nothing
// below NextOffset.
func TestSegmentReadAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	l := openSeg(t, dir, segment.Options{SegmentBytes: 2048, IndexInterval: 64})
	var all []log.Record
	for i := range 60 {
		recs, err := l.AppendBatch(payloads(1+i%3, 10+i*7%200))
		require.NoError(t, err)
		all = append(all, recs...)
	}
	require.Greater(t, len(l.Segments()), 5)
	for reopen := range 2 {
		lg := l
		if reopen == 1 {
			require.NoError(t, l.Close())
			lg = openSeg(t, dir, segment.Options{})
		}
		require.Equal(t, all, readAll(t, lg))
		for start := range uint64(len(all)) {
			for _, n := range []int{1, 2, 5, 1000} {
				got, err := lg.Read(start, n)
				require.NoError(t, err)
				require.NotEmpty(t, got)
				require.LessOrEqual(t, len(got), n)
				require.Equal(t, all[start:start+uint64(len(got))], got)
			}
		}
		past, err := lg.Read(uint64(len(all)), 1)
		require.NoError(t, err)
		require.Empty(t, past)
		_, err = lg.Read(0, 0)
		require.ErrorIs(t, err, log.ErrInvalidArgument)
	}
}

// TestSegmentAdvanceStart pins doc.go § Log start: the start only rises;
// sealed segments wholly below it are deleted oldest first, the active one
// never; reads below it fail with ErrBeforeLogStart; a start inside a
// segment is persisted and survives a reopen.
func TestSegmentAdvanceStart(t *testing.T) {
	dir, all := threeSegments(t)
	l := openSeg(t, dir, segment.Options{SegmentBytes: 1024})
	_, err := l.AdvanceStart(31)
	require.ErrorIs(t, err, log.ErrInvalidArgument)

	gone, err := l.AdvanceStart(5)
	require.NoError(t, err)
	require.Empty(t, gone)
	require.Equal(t, uint64(5), l.LogStart())
	_, err = l.Read(4, 1)
	require.ErrorIs(t, err, segment.ErrBeforeLogStart)
	require.Equal(t, all[5:], readAll(t, l))
	require.FileExists(t, filepath.Join(dir, segment.StartFileName))

	gone, err = l.AdvanceStart(3)
	require.NoError(t, err)
	require.Empty(t, gone)
	require.Equal(t, uint64(5), l.LogStart(), "never lowers")

	gone, err = l.AdvanceStart(20)
	require.NoError(t, err)
	require.Len(t, gone, 2)
	require.Equal(t, []uint64{0, 10}, []uint64{gone[0].Base, gone[1].Base})
	require.Equal(t, []uint64{20}, bases(l))
	require.Equal(t, uint64(20), l.LogStart())

	gone, err = l.AdvanceStart(30)
	require.NoError(t, err)
	require.Empty(t, gone, "never the active segment")
	require.Equal(t, uint64(30), l.LogStart())
	require.Equal(t, uint64(30), l.NextOffset())
	require.Empty(t, readAll(t, l))
	rec, err := l.Append([]byte("x"))
	require.NoError(t, err)
	require.Equal(t, uint64(30), rec.Offset)
	require.NoError(t, l.Close())

	l = openSeg(t, dir, segment.Options{})
	require.Equal(t, uint64(30), l.LogStart())
	require.Equal(t, []log.Record{rec}, readAll(t, l))
}

// TestSegmentTruncate: Truncate drops records across segments (newer
// segments deleted, the one holding end active again and cut), refuses
// an end outside [LogStart, NextOffset], and appends continue at end.
func TestSegmentTruncate(t *testing.T) {
	for _, end := range []uint64{25, 20, 15, 10, 3, 0} {
		dir, all := threeSegments(t)
		l := openSeg(t, dir, segment.Options{SegmentBytes: 1024})
		require.ErrorIs(t, l.Truncate(31), log.ErrInvalidArgument)
		require.NoError(t, l.Truncate(30))
		require.NoError(t, l.Truncate(end))
		require.Equal(t, end, l.NextOffset())
		require.Equal(t, all[:end], append([]log.Record{}, readAll(t, l)...)[:end])
		segs := l.Segments()
		require.False(t, segs[len(segs)-1].Sealed)
		require.LessOrEqual(t, segs[len(segs)-1].Base, end)
		rec, err := l.Append([]byte("new"))
		require.NoError(t, err)
		require.Equal(t, end, rec.Offset)
		require.NoError(t, l.Close())
		l = openSeg(t, dir, segment.Options{SegmentBytes: 1024})
		require.Empty(t, l.Rebuilt())
		require.Equal(t, append(append([]log.Record{}, all[:end]...), rec), readAll(t, l))
	}
	dir, _ := threeSegments(t)
	l := openSeg(t, dir, segment.Options{})
	_, err := l.AdvanceStart(12)
	require.NoError(t, err)
	require.ErrorIs(t, l.Truncate(11), log.ErrInvalidArgument)
	require.NoError(t, l.Truncate(12))
	require.Equal(t, uint64(12), l.NextOffset())
}

// TestSegmentResetTo: a follower behind a leader's start empties its log
// at the start: one empty active segment named after it.
func TestSegmentResetTo(t *testing.T) {
	dir, _ := threeSegments(t)
	l := openSeg(t, dir, segment.Options{})
	require.ErrorIs(t, l.ResetTo(29), log.ErrInvalidArgument)
	require.NoError(t, l.ResetTo(100))
	require.Equal(t, uint64(100), l.LogStart())
	require.Equal(t, uint64(100), l.NextOffset())
	require.ElementsMatch(t, []string{segment.SegmentFileName(100), segment.StartFileName}, fileNames(t, dir))
	_, err := l.Read(99, 1)
	require.ErrorIs(t, err, segment.ErrBeforeLogStart)
	require.NoError(t, l.AppendRecord(log.Record{Offset: 100, Timestamp: 1, Payload: []byte("x")}))
	require.NoError(t, l.ResetTo(101), "start == NextOffset")
	require.NoError(t, l.ResetTo(101), "and again: the empty segment is already there")
	require.Equal(t, []string{segment.SegmentFileName(101), segment.StartFileName}, fileNames(t, dir))
	require.NoError(t, l.Close())
	l = openSeg(t, dir, segment.Options{})
	require.Equal(t, uint64(101), l.LogStart())
	require.Equal(t, uint64(101), l.NextOffset())
}

// TestSegmentPlanRetention pins PlanRetention's rules (doc.go § Log start;
// Kafka's retention.ms / retention.bytes): age by MaxTimestamp, bytes while
// the total exceeds the limit, never the active segment, never a segment
// reaching the high watermark, -1 for ever.
func TestSegmentPlanRetention(t *testing.T) {
	now := time.Unix(1000, 0)
	ts := func(s int64) int64 { return time.Unix(s, 0).UnixNano() }
	segs := []segment.SegmentInfo{
		{Base: 0, Next: 10, Size: 100, MaxTimestamp: ts(100), Sealed: true},
		{Base: 10, Next: 20, Size: 100, MaxTimestamp: ts(500), Sealed: true},
		{Base: 20, Next: 30, Size: 100, MaxTimestamp: ts(900), Sealed: true},
		{Base: 30, Next: 35, Size: 50, MaxTimestamp: ts(10)}, // active, old
	}
	forever := segment.RetentionPolicy{Age: -1, Bytes: -1}
	for _, tc := range []struct {
		name      string
		p         segment.RetentionPolicy
		hw        uint64
		wantStart uint64
		wantDrop  int
	}{
		{"forever", forever, 35, 0, 0},
		{"age keeps newer", segment.RetentionPolicy{Age: 600 * time.Second, Bytes: -1}, 35, 10, 1},
		{"age boundary is strict", segment.RetentionPolicy{Age: 500 * time.Second, Bytes: -1}, 35, 10, 1},
		{"age drops all sealed, never the active", segment.RetentionPolicy{Age: 0, Bytes: -1}, 35, 30, 3},
		{"age stops at the first young segment", segment.RetentionPolicy{Age: 200 * time.Second, Bytes: -1}, 35, 20, 2},
		{"bytes", segment.RetentionPolicy{Age: -1, Bytes: 200}, 35, 20, 2},
		{"bytes exact keeps", segment.RetentionPolicy{Age: -1, Bytes: 350}, 35, 0, 0},
		{"bytes zero", segment.RetentionPolicy{Age: -1, Bytes: 0}, 35, 30, 3},
		{"larger of the two", segment.RetentionPolicy{Age: 600 * time.Second, Bytes: 200}, 35, 20, 2},
		{"high watermark guard", segment.RetentionPolicy{Age: 0, Bytes: 0}, 19, 10, 1},
		{"high watermark at a boundary", segment.RetentionPolicy{Age: 0, Bytes: 0}, 20, 20, 2},
		{"high watermark zero", segment.RetentionPolicy{Age: 0, Bytes: 0}, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, drop := segment.PlanRetention(segs, tc.p, now, tc.hw)
			require.Equal(t, tc.wantDrop, drop)
			require.Equal(t, tc.wantStart, start)
		})
	}
	start, drop := segment.PlanRetention(nil, forever, now, 0)
	require.Equal(t, uint64(0), start)
	require.Zero(t, drop)
	start, drop = segment.PlanRetention(segs[3:], segment.RetentionPolicy{Age: 0, Bytes: 0}, now, 100)
	require.Equal(t, uint64(30), start)
	require.Zero(t, drop, "a lone active segment stays")
}

// TestSegmentOffsetForTime: the first offset whose timestamp is >= ts,
// searched by the largest timestamp so far, with a clock that steps back,
// ts before and after everything, and the log start respected.
func TestSegmentOffsetForTime(t *testing.T) {
	// Timestamps by offset: rising, then a step back, then rising again.
	stamps := []int64{10, 20, 30, 40, 50, 60, 70, 80, 5, 6, 7, 8, 90, 100, 15, 110, 120, 130, 140, 150}
	want := func(ts int64, from int) (uint64, bool) {
		for i := from; i < len(stamps); i++ {
			if stamps[i] >= ts {
				return uint64(i), true
			}
		}
		return 0, false
	}
	dir := t.TempDir()
	l := openSeg(t, dir, segment.Options{SegmentBytes: 1024, IndexInterval: 30})
	for i, s := range stamps {
		require.NoError(t, l.AppendRecord(log.Record{Offset: uint64(i), Timestamp: s, Payload: payloadOf(100)}))
	}
	require.Greater(t, len(l.Segments()), 2)
	check := func(l *segment.Log, from int) {
		for _, ts := range []int64{math.MinInt64, 0, 5, 6, 9, 10, 11, 15, 16, 55, 80, 81, 89, 90, 95, 111, 150, 151, math.MaxInt64} {
			off, found, err := l.OffsetForTime(ts)
			require.NoError(t, err)
			wOff, wFound := want(ts, from)
			require.Equal(t, wFound, found, "ts %d", ts)
			require.Equal(t, wOff, off, "ts %d", ts)
		}
	}
	check(l, 0)
	require.NoError(t, l.Close())
	l = openSeg(t, dir, segment.Options{})
	check(l, 0)
	_, err := l.AdvanceStart(9)
	require.NoError(t, err)
	check(l, 9)
	// A sidecar damaged after open: the segment is walked from its start.
	for _, s := range l.Segments()[:1] {
		require.NoError(t, os.WriteFile(filepath.Join(dir, segment.SidecarFileName(s.Base)), []byte("junk"), 0o644))
	}
	check(l, 9)
}

// TestSegmentScanDir: ScanDir visits every record of every segment in
// order, with its segment and position, including records below the start
// still on disk; it changes nothing.
func TestSegmentScanDir(t *testing.T) {
	dir, all := threeSegments(t)
	l := openSeg(t, dir, segment.Options{})
	_, err := l.AdvanceStart(5)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	var got []log.Record
	var segBases []uint64
	var lastPos int64 = -1
	err = segment.ScanDir(dir, log.Options{}, func(seg segment.SegmentInfo, pos int64, rec log.Record) error {
		got = append(got, rec)
		if len(segBases) == 0 || segBases[len(segBases)-1] != seg.Base {
			segBases = append(segBases, seg.Base)
			lastPos = -1
		}
		require.Greater(t, pos, lastPos)
		lastPos = pos
		require.Equal(t, rec.Offset+1, seg.Next)
		require.Equal(t, seg.Base != 20, seg.Sealed)
		require.Equal(t, filepath.Join(dir, segment.SegmentFileName(seg.Base)), seg.Path)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, all, got, "records below the start included")
	require.Equal(t, []uint64{0, 10, 20}, segBases)

	legacy := copyDir(t, filepath.Join("testdata", "legacy"))
	n := 0
	require.NoError(t, segment.ScanDir(legacy, log.Options{}, func(seg segment.SegmentInfo, _ int64, _ log.Record) error {
		n++
		require.Equal(t, filepath.Join(legacy, segment.LegacyFileName), seg.Path)
		return nil
	}))
	require.Equal(t, 2, n)
	require.Equal(t, []string{segment.LegacyFileName}, fileNames(t, legacy), "unchanged")
}

// TestSegmentFileNames: names sort as offsets do and parse back.
func TestSegmentFileNames(t *testing.T) {
	require.Equal(t, "00000000000000000000.log", segment.SegmentFileName(0))
	require.Equal(t, "18446744073709551615.index", segment.SidecarFileName(math.MaxUint64))
	for _, b := range []uint64{0, 1, 12345, math.MaxUint64} {
		got, ok := segment.ParseSegmentFileName(segment.SegmentFileName(b))
		require.True(t, ok)
		require.Equal(t, b, got)
		got, ok = segment.ParseSidecarFileName(segment.SidecarFileName(b))
		require.True(t, ok)
		require.Equal(t, b, got)
	}
	for _, bad := range []string{"log.bin", "0.log", "0000000000000000000a.log", "99999999999999999999.log", "00000000000000000000.index", "00000000000000000000.log.tmp"} {
		_, ok := segment.ParseSegmentFileName(bad)
		require.False(t, ok, bad)
	}
}

// MustExist refuses a missing directory and one without a log, creating
// nothing; a directory with a log opens.
func TestSegmentMustExist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	_, err := segment.Open(dir, segment.Options{MustExist: true})
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NoDirExists(t, dir)
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "quarantine-1-2-3.bin"), nil, 0o644))
	_, err = segment.Open(dir, segment.Options{MustExist: true})
	require.ErrorIs(t, err, fs.ErrNotExist)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing created")
	l, err := segment.Open(dir, segment.Options{})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	l, err = segment.Open(dir, segment.Options{MustExist: true})
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

// CheckSidecar and ReadLogStart judge a log's files with the package's own
// parsers and change nothing: a whole sidecar passes, a flipped byte, a
// missing one and a wrong end are named; a raised start is read back.
func TestSegmentCheckSidecarAndReadLogStart(t *testing.T) {
	dir := t.TempDir()
	l, err := segment.Open(dir, segment.Options{SegmentBytes: segment.MinSegmentBytes})
	require.NoError(t, err)
	for range 20 {
		_, err := l.Append(make([]byte, 200))
		require.NoError(t, err)
	}
	segs := l.Segments()
	require.Greater(t, len(segs), 2)
	_, ok, err := segment.ReadLogStart(nil, dir)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = l.AdvanceStart(segs[1].Base + 1)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	start, ok, err := segment.ReadLogStart(nil, dir)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, segs[1].Base+1, start)

	s := segs[1]
	require.NoError(t, segment.CheckSidecar(nil, s.Path, s.Next))
	require.ErrorIs(t, segment.CheckSidecar(nil, s.Path, s.Next+1), segment.ErrSidecar)
	sc := filepath.Join(dir, segment.SidecarFileName(s.Base))
	data, err := os.ReadFile(sc)
	require.NoError(t, err)
	data[10] ^= 1
	require.NoError(t, os.WriteFile(sc, data, 0o644))
	require.ErrorIs(t, segment.CheckSidecar(nil, s.Path, s.Next), segment.ErrSidecar)
	require.NoError(t, os.Remove(sc))
	require.ErrorIs(t, segment.CheckSidecar(nil, s.Path, s.Next), segment.ErrSidecar)
}

// ExpiredActive: the active segment is due a roll for retention only when
// every sealed segment has expired, it holds records, all of them are
// older than retention.ms and below the high watermark.
func TestSegmentExpiredActive(t *testing.T) {
	now := time.Unix(1000, 0)
	ts := func(s int64) int64 { return time.Unix(s, 0).UnixNano() }
	old := []segment.SegmentInfo{
		{Base: 0, Next: 10, Size: 100, MaxTimestamp: ts(100), Sealed: true},
		{Base: 10, Next: 15, Size: 50, MaxTimestamp: ts(200)},
	}
	age := func(s int64) segment.RetentionPolicy {
		return segment.RetentionPolicy{Age: time.Duration(s) * time.Second, Bytes: -1}
	}
	require.True(t, segment.ExpiredActive(old, age(600), now, 15))
	require.False(t, segment.ExpiredActive(old, age(850), now, 15), "the active segment is young enough")
	require.False(t, segment.ExpiredActive(old, age(600), now, 14), "a record at or above the high watermark")
	require.False(t, segment.ExpiredActive(old, segment.RetentionPolicy{Age: -1, Bytes: 0}, now, 15), "retention.ms -1")
	young := []segment.SegmentInfo{{Base: 0, Next: 10, MaxTimestamp: ts(950), Sealed: true}, old[1]}
	require.False(t, segment.ExpiredActive(young, age(600), now, 15), "a sealed segment is not expired")
	empty := []segment.SegmentInfo{{Base: 15, Next: 15, MaxTimestamp: math.MinInt64}}
	require.False(t, segment.ExpiredActive(empty, age(0), now, 15), "an empty active segment")
}

// Roll seals a non-empty active segment and does nothing to an empty one.
func TestSegmentRoll(t *testing.T) {
	l := openSeg(t, t.TempDir(), segment.Options{})
	rolled, err := l.Roll()
	require.NoError(t, err)
	require.False(t, rolled)
	_, err = l.Append([]byte("a"))
	require.NoError(t, err)
	rolled, err = l.Roll()
	require.NoError(t, err)
	require.True(t, rolled)
	require.Equal(t, []uint64{0, 1}, bases(l))
	recs, err := l.Read(0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)
}
