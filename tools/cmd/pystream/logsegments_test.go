package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/stretchr/testify/require"
)

// writeSegments lays out a log directory by hand, one segment file per
// group of payloads, each starting where the previous one ended, so that a
// test does not depend on when a log rolls. It returns every record.
func writeSegments(t *testing.T, dir string, groups ...[]string) []log.Record {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var all []log.Record
	var next uint64
	for _, g := range groups {
		var frames []byte
		base := next
		for _, p := range g {
			r := log.Record{Offset: next, Timestamp: 1714564800000000000 + int64(next), Payload: []byte(p)}
			frames = log.AppendFrame(frames, r)
			all = append(all, r)
			next++
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, segment.SegmentFileName(base)), frames, 0o644))
	}
	return all
}

// dumpOffsets runs log dump with args and returns the offsets printed.
func dumpOffsets(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	r := run(t, dir, "", append([]string{"log", "dump"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var offs []string
	for line := range strings.SplitSeq(strings.TrimSpace(r.stdout), "\n") {
		f := strings.Fields(line)
		require.Equal(t, "offset:", f[0], line)
		offs = append(offs, f[1])
	}
	return offs
}

// TestCLILogSegmentsWhole: a log directory of three segments verifies as
// one log, and dump prints every record in order, naming each record's
// segment; --from starts later; one segment file alone numbers its records
// from the base in its name.
func TestCLILogSegmentsWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "partition-000000")
	writeSegments(t, p, []string{"a", "b"}, []string{"c"}, []string{"d", "e"})

	items := verifyJSON(t, dir, "partition-000000", 0)
	it, ok := items["log partition-000000/"]
	require.True(t, ok, "%v", items)
	require.Equal(t, "OK", it.Status)
	r := run(t, dir, "", "log", "verify", "partition-000000")
	require.Contains(t, r.stdout, "5 records in 3 segments, log start 0")

	require.Equal(t, []string{"0", "1", "2", "3", "4"}, dumpOffsets(t, dir, "partition-000000"))
	require.Equal(t, []string{"3", "4"}, dumpOffsets(t, dir, "--from", "3", "partition-000000"))
	require.Equal(t, []string{"3", "4"}, dumpOffsets(t, dir, filepath.Join("partition-000000", segment.SegmentFileName(3))))
	r = run(t, dir, "", "log", "dump", "partition-000000")
	require.Contains(t, r.stdout, "offset: 2 position: 0 segment: "+segment.SegmentFileName(2)+" ")
}

// TestCLILogSegmentsLegacy: a directory written before segments (log.bin
// only) verifies, said to be not yet upgraded, and dumps.
func TestCLILogSegmentsLegacy(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, filepath.Join(dir, "partition-000000", segment.LegacyFileName), "a", "b")
	items := verifyJSON(t, dir, "partition-000000", 0)
	require.Equal(t, "OK", items["log partition-000000/"].Status)
	r := run(t, dir, "", "log", "verify", "partition-000000")
	require.Contains(t, r.stdout, "not yet upgraded")
	require.Equal(t, []string{"0", "1"}, dumpOffsets(t, dir, "partition-000000"))
}

// TestCLILogRepairSegmentsTornTail: a torn tail of the last segment is
// reported on the directory, naming that segment, and repair of the
// directory cuts it from that file only, keeping a backup beside it.
func TestCLILogRepairSegmentsTornTail(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "partition-000000")
	writeSegments(t, p, []string{"a", "b"}, []string{"c", "d"})
	last := filepath.Join(p, segment.SegmentFileName(2))
	appendBytes(t, last, tornFrame(4))

	it := verifyJSON(t, dir, "partition-000000", 1)["log partition-000000/"]
	require.Equal(t, "DAMAGED", it.Status)
	require.True(t, it.TornTail)
	require.Equal(t, filepath.Join("partition-000000", segment.SegmentFileName(2)), it.Segment)
	require.Equal(t, frameEnd("c", "d"), *it.Position)
	require.Equal(t, uint64(4), *it.Offset)

	r := run(t, dir, "", "log", "repair", "--yes", "partition-000000")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "repaired "+filepath.Join("partition-000000", segment.SegmentFileName(2)))
	backups, err := filepath.Glob(last + ".broken-*")
	require.NoError(t, err)
	require.Len(t, backups, 1)

	verifyJSON(t, dir, "partition-000000", 0)
	require.Equal(t, []string{"0", "1", "2", "3"}, dumpOffsets(t, dir, "partition-000000"))
	r = run(t, dir, "", "log", "repair", "partition-000000")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "nothing to repair")
}

// TestCLILogRepairSegmentsRefusesMiddle: damage in a sealed segment, even
// the shape of a torn tail, or a gap between segments, is damage that names
// its segment file, and repair refuses it and changes nothing: PyStream
// never cuts records from the middle of a log.
// Reference: docs/phase-1-log.md § Torn tails and repair.
func TestCLILogRepairSegmentsRefusesMiddle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(p string)
		segment uint64
	}{
		{"torn frame in a sealed segment", func(p string) {
			appendBytes(t, filepath.Join(p, segment.SegmentFileName(2)), tornFrame(3))
		}, 2},
		{"bad frame in the first segment", func(p string) {
			appendBytes(t, filepath.Join(p, segment.SegmentFileName(0)), badFrame(2))
		}, 0},
		{"gap between segments", func(p string) {
			require.NoError(t, os.Remove(filepath.Join(p, segment.SegmentFileName(2))))
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "partition-000000")
			writeSegments(t, p, []string{"a", "b"}, []string{"c"}, []string{"d", "e"})
			tc.damage(p)
			name := segment.SegmentFileName(tc.segment)

			it := verifyJSON(t, dir, "partition-000000", 1)["log partition-000000/"]
			require.Equal(t, "DAMAGED", it.Status)
			require.False(t, it.TornTail)
			require.Equal(t, filepath.Join("partition-000000", name), it.Segment)

			before := snapshot(t, p)
			r := run(t, dir, "", "log", "repair", "--yes", "partition-000000")
			require.Equal(t, 1, r.code)
			require.Contains(t, r.stderr, "segment "+name+" is damaged; PyStream never cuts records from the middle of a log")
			require.Equal(t, before, snapshot(t, p))
		})
	}
}

// TestCLILogRepairRefusesSealedSegmentFile: a sealed segment named on its
// own is not cut even where its own bytes end in a torn frame.
func TestCLILogRepairRefusesSealedSegmentFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "partition-000000")
	writeSegments(t, p, []string{"a", "b"}, []string{"c"})
	sealed := filepath.Join(p, segment.SegmentFileName(0))
	appendBytes(t, sealed, tornFrame(2))
	before := snapshot(t, p)
	r := run(t, dir, "", "log", "repair", "--yes", sealed)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "is a sealed segment")
	require.Equal(t, before, snapshot(t, p))
}

// TestCLILogVerifyReplicaLogStarts: replicas of a partition may start at
// different offsets (the leader deleted its oldest segment; a follower was
// reset to a later start); they are compared over the offsets both hold.
func TestCLILogVerifyReplicaLogStarts(t *testing.T) {
	c := newCluster(t, "1, 2")
	// The follower of partition 0 holds offsets 1..2 only.
	follower := replicaDir(c.root, 2, 0)
	require.NoError(t, os.RemoveAll(follower))
	var frames []byte
	for _, r := range c.leader[0][1:] {
		frames = log.AppendFrame(frames, r)
	}
	writeFile(t, filepath.Join(follower, segment.SegmentFileName(1)), string(frames))

	items := verifyJSON(t, c.root, ".", 0)
	require.Equal(t, "OK", items["replica broker-000002/topics/orders/partition-000000/"].Status)

	// A differing record in the shared range is still divergence.
	frames = log.AppendFrame(log.AppendFrame(nil, c.leader[0][1]), log.Record{Offset: 2, Timestamp: c.leader[0][2].Timestamp, Payload: []byte("C")})
	writeFile(t, filepath.Join(follower, segment.SegmentFileName(1)), string(frames))
	items = verifyJSON(t, c.root, ".", 1)
	it := items["replica broker-000002/topics/orders/partition-000000/"]
	require.Equal(t, "DIVERGED", it.Status)
	require.Equal(t, uint64(2), *it.Offset)
}

// snapshot is every file in dir and its bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}
