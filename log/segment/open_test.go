package segment_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// threeSegments builds a closed log of three segments (two sealed) in a
// new directory and returns it with its records.
func threeSegments(t *testing.T) (string, []log.Record) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "p")
	l, err := segment.Open(dir, segment.Options{SegmentBytes: 1024, IndexInterval: 100})
	require.NoError(t, err)
	var all []log.Record
	for range 3 {
		recs, err := l.AppendBatch(payloads(10, 70)) // 940 bytes: one segment each
		require.NoError(t, err)
		all = append(all, recs...)
	}
	require.Equal(t, []uint64{0, 10, 20}, bases(l))
	require.NoError(t, l.Close())
	return dir, all
}

// TestSegmentOpenLegacy pins doc.go § Recovery: a phase-1 log.bin from
// before segments (testdata/legacy, a copy of log/testdata/two-records.log)
// opens unchanged as the first segment.
func TestSegmentOpenLegacy(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "legacy"))
	want, err := os.ReadFile(filepath.Join(dir, segment.LegacyFileName))
	require.NoError(t, err)
	var notes []string
	l := openSeg(t, dir, segment.Options{Logf: func(f string, a ...any) { notes = append(notes, f) }})
	require.Equal(t, []string{segment.SegmentFileName(0)}, fileNames(t, dir))
	require.Len(t, notes, 1)
	recs := readAll(t, l)
	require.Len(t, recs, 2)
	require.Equal(t, "hello, pystream", string(recs[0].Payload))
	got, err := os.ReadFile(filepath.Join(dir, segment.SegmentFileName(0)))
	require.NoError(t, err)
	require.Equal(t, want, got, "byte for byte")
	_, err = l.Append([]byte("more"))
	require.NoError(t, err)
}

// TestSegmentOpenLegacyBesideSegments: log.bin and a segment file together
// are corruption; nothing is changed.
func TestSegmentOpenLegacyBesideSegments(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "legacy"))
	legacy, err := os.ReadFile(filepath.Join(dir, segment.LegacyFileName))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, segment.SegmentFileName(0)), legacy, 0o644))
	_, err = segment.Open(dir, segment.Options{})
	var cerr *log.CorruptionError
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, filepath.Join(dir, segment.LegacyFileName), cerr.Path)
	require.ElementsMatch(t, []string{segment.LegacyFileName, segment.SegmentFileName(0)}, fileNames(t, dir))
}

// TestSegmentSidecarRebuilt pins doc.go § Recovery: a sealed segment's
// sidecar that is missing, bit-flipped, cut short or disagrees with its
// segment is rebuilt from the segment and reported; reads stay right.
func TestSegmentSidecarRebuilt(t *testing.T) {
	for name, damage := range map[string]func(path string){
		"missing": func(p string) { require.NoError(t, os.Remove(p)) },
		"bit flip": func(p string) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b[len(b)/2] ^= 0x10
			require.NoError(t, os.WriteFile(p, b, 0o644))
		},
		"truncated": func(p string) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b[:len(b)-5], 0o644))
		},
		"other segment's": func(p string) {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(p), segment.SidecarFileName(0)))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, 0o644))
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, all := threeSegments(t)
			path := filepath.Join(dir, segment.SidecarFileName(10))
			damage(path)
			var logged int
			l := openSeg(t, dir, segment.Options{IndexInterval: 100, Logf: func(string, ...any) { logged++ }})
			// A damaged header is found by Open, a damaged index by the
			// first read of the segment; either way it is rebuilt once.
			require.Equal(t, all, readAll(t, l))
			for off := uint64(0); off < 30; off++ {
				got, err := l.Read(off, 1)
				require.NoError(t, err)
				require.Equal(t, all[off], got[0])
			}
			require.Len(t, l.Rebuilt(), 1)
			require.Contains(t, l.Rebuilt()[0], path)
			require.Equal(t, 1, logged)
			require.NoError(t, l.Close())
			l2 := openSeg(t, dir, segment.Options{})
			require.Equal(t, all, readAll(t, l2))
			require.Empty(t, l2.Rebuilt(), "rebuilt once, durably")
		})
	}
}

// TestSegmentMiddleDamage: damage inside a sealed segment is a
// *log.CorruptionError naming that file and not a torn tail, whether Open
// finds it (sidecar gone, segment walked) or a Read does.
func TestSegmentMiddleDamage(t *testing.T) {
	dir, _ := threeSegments(t)
	seg := filepath.Join(dir, segment.SegmentFileName(10))
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	b[len(b)-10] = 0xff // inside the last frame's payload: undetectable
	b[94*5+3] ^= 0x01   // record_length of the sixth frame
	require.NoError(t, os.WriteFile(seg, b, 0o644))

	l := openSeg(t, dir, segment.Options{})
	_, err = l.Read(15, 1)
	var cerr *log.CorruptionError
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, seg, cerr.Path)
	require.False(t, cerr.TornTail)
	require.NoError(t, l.Close())

	require.NoError(t, os.Remove(filepath.Join(dir, segment.SidecarFileName(10))))
	_, err = segment.Open(dir, segment.Options{})
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, seg, cerr.Path)
	require.False(t, cerr.TornTail)

	// A sealed segment cut short ends like a torn tail, but is not one.
	require.NoError(t, os.WriteFile(seg, b[:len(b)-7], 0o644))
	_, err = segment.Open(dir, segment.Options{})
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, seg, cerr.Path)
	require.False(t, cerr.TornTail)
	err = segment.ScanDir(dir, log.Options{}, func(segment.SegmentInfo, int64, log.Record) error { return nil })
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, seg, cerr.Path)
	require.False(t, cerr.TornTail)
}

// TestSegmentTornTailLastSegment: a torn tail in the active segment is
// phase 1's CorruptionError with TornTail, and log.RepairWithOptions at
// the segment's base cuts it off.
func TestSegmentTornTailLastSegment(t *testing.T) {
	dir, all := threeSegments(t)
	seg := filepath.Join(dir, segment.SegmentFileName(20))
	f, err := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{0, 0, 0, 30, 0})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = segment.Open(dir, segment.Options{})
	var cerr *log.CorruptionError
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, seg, cerr.Path)
	require.True(t, cerr.TornTail)
	err = segment.ScanDir(dir, log.Options{}, func(segment.SegmentInfo, int64, log.Record) error { return nil })
	require.ErrorAs(t, err, &cerr)
	require.True(t, cerr.TornTail)

	res, err := log.RepairWithOptions(seg, log.Options{BaseOffset: 20})
	require.NoError(t, err)
	require.True(t, res.Repaired)
	require.NoError(t, os.Remove(res.Backup))
	l := openSeg(t, dir, segment.Options{})
	require.Equal(t, all, readAll(t, l))
}

// TestSegmentStaleSidecarOnLast: a sidecar on the last segment (a roll
// that died before creating the next segment) is dropped, and the segment
// is active again.
func TestSegmentStaleSidecarOnLast(t *testing.T) {
	dir, all := threeSegments(t)
	last := filepath.Join(dir, segment.SegmentFileName(20))
	require.NoError(t, os.Remove(last))
	l := openSeg(t, dir, segment.Options{SegmentBytes: 1024})
	require.NoFileExists(t, filepath.Join(dir, segment.SidecarFileName(10)))
	require.Equal(t, all[:20], readAll(t, l))
	require.False(t, l.Segments()[1].Sealed)
	require.Empty(t, l.Rebuilt())
	rec, err := l.Append(payloadOf(100)) // 940 + 124 > 1024: the roll happens again
	require.NoError(t, err)
	require.Equal(t, uint64(20), rec.Offset)
	require.Equal(t, []uint64{0, 10, 20}, bases(l))
}

// TestSegmentOrphans: an orphan sidecar and a leftover log.start.tmp are
// removed at open; unknown files are left alone.
func TestSegmentOrphans(t *testing.T) {
	dir, all := threeSegments(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, segment.SidecarFileName(99)), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, segment.StartFileName+".tmp"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644))
	l := openSeg(t, dir, segment.Options{})
	require.Equal(t, all, readAll(t, l))
	require.NoFileExists(t, filepath.Join(dir, segment.SidecarFileName(99)))
	require.NoFileExists(t, filepath.Join(dir, segment.StartFileName+".tmp"))
	require.FileExists(t, filepath.Join(dir, "README"))
}

// TestSegmentOpenOptions: bad options are refused before anything is
// created.
func TestSegmentOpenOptions(t *testing.T) {
	for _, o := range []segment.Options{
		{SegmentBytes: segment.MinSegmentBytes - 1},
		{SegmentBytes: segment.MaxSegmentBytes + 1},
		{SegmentAge: -1},
		{IndexInterval: -1},
		{IndexInterval: segment.MaxSegmentBytes + 1},
		{Log: log.Options{MaxPayloadSize: -1}},
	} {
		dir := filepath.Join(t.TempDir(), "p")
		_, err := segment.Open(dir, o)
		require.ErrorIs(t, err, log.ErrInvalidArgument, "%+v", o)
		require.NoDirExists(t, dir)
	}
}

// TestSegmentIndexLoadedLazily pins doc.go § Fast open: Open trusts each
// sealed segment's checksummed sidecar header and loads no index; the
// first read of a segment loads its thin index, and only that segment's.
// A damaged header is rebuilt by Open itself.
func TestSegmentIndexLoadedLazily(t *testing.T) {
	dir, all := threeSegments(t)
	l := openSeg(t, dir, segment.Options{IndexInterval: 100})
	require.Equal(t, []bool{false, false}, segment.IndexLoaded(l))
	got, err := l.Read(12, 1)
	require.NoError(t, err)
	require.Equal(t, all[12], got[0])
	require.Equal(t, []bool{false, true}, segment.IndexLoaded(l))
	require.NoError(t, l.Close())

	path := filepath.Join(dir, segment.SidecarFileName(10))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[20] ^= 1 // the record count: the header's checksum fails
	require.NoError(t, os.WriteFile(path, b, 0o644))
	l = openSeg(t, dir, segment.Options{IndexInterval: 100})
	require.Len(t, l.Rebuilt(), 1, "Open rebuilds a damaged header")
	require.Contains(t, l.Rebuilt()[0], "header checksum")
	require.Equal(t, all, readAll(t, l))
}
