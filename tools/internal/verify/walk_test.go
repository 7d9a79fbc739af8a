package verify_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/tools/internal/verify"
	"github.com/pystream/pystream/topic"
	"github.com/stretchr/testify/require"
)

// The verifier's own checks are the ones that span files; what a single
// metadata file may hold is the owning module's parser's business
// (parity_test.go).
func TestVerifyCrossFileChecks(t *testing.T) {
	const meta = `{"version": 1, "name": "orders", "partition_count": 2}`
	root := t.TempDir()
	// A sound topic.meta in a directory of another name.
	write(t, filepath.Join(root, "payments", topic.MetadataFile), []byte(meta))
	// A sound topic.meta whose partition 1 has no log and whose
	// partition 2 lies beyond partition_count.
	orders := filepath.Join(root, "orders")
	write(t, filepath.Join(orders, topic.MetadataFile), []byte(meta))
	writeSegment(t, topic.PartitionLogDir(orders, 0), 0)
	writeSegment(t, topic.PartitionLogDir(orders, 2), 0)
	// A sound offset file under a name the client never writes.
	write(t, filepath.Join(root, "offsets", "w", "orders", "partition-7"+client.OffsetFileSuffix), []byte(`{"version": 1, "offset": 3}`))

	report, err := verify.Verify(root)
	require.NoError(t, err)
	got := map[string]verify.Status{}
	for _, it := range report.Items {
		got[key(t, root, it)] = it.Status
	}
	require.Equal(t, map[string]verify.Status{
		"topic.meta payments/topic.meta":             verify.StatusDamaged,
		"topic.meta orders/topic.meta":               verify.StatusOK,
		"log orders/partition-000000/":               verify.StatusOK,
		"log orders/partition-000001/":               verify.StatusMissing,
		"log orders/partition-000002/":               verify.StatusOK,
		"topic.meta orders/partition-000002":         verify.StatusDamaged,
		"offset offsets/w/orders/partition-7.offset": verify.StatusDamaged,
	}, got)
}

// key is how a test names an item: its kind and its path relative to root,
// a directory's ending in "/".
func key(t *testing.T, root string, it verify.Item) string {
	t.Helper()
	rel, err := filepath.Rel(root, it.Path)
	require.NoError(t, err)
	rel = filepath.ToSlash(rel)
	if strings.HasSuffix(it.Path, string(filepath.Separator)) {
		rel += "/"
	}
	return string(it.Kind) + " " + rel
}

// writeSegment writes the segment file of base in dir by hand, one frame
// per payload with offsets from base, so that a test lays out segments
// without depending on when a log rolls. It returns the file's path.
func writeSegment(t *testing.T, dir string, base uint64, payloads ...string) string {
	t.Helper()
	var frames []byte
	for i, p := range payloads {
		off := base + uint64(i)
		frames = log.AppendFrame(frames, log.Record{Offset: off, Timestamp: 1000 + int64(off), Payload: []byte(p)})
	}
	path := filepath.Join(dir, segment.SegmentFileName(base))
	write(t, path, frames)
	return path
}

// appendTo appends raw bytes to the file at path.
func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// badFrame is a whole-looking frame whose two length fields disagree:
// corruption, never a torn tail.
func badFrame(offset uint64) []byte {
	b := log.AppendFrame(nil, log.Record{Offset: offset, Timestamp: 1, Payload: []byte("xyz")})
	binary.BigEndian.PutUint32(b[20:24], 99)
	return b
}

// tornFrame is the start of a frame whose lengths agree but which runs past
// the end of the file: the torn tail of an append that never returned.
func tornFrame(offset uint64) []byte {
	b := log.AppendFrame(nil, log.Record{Offset: offset, Timestamp: 1, Payload: []byte("0123456789")})
	return b[:log.HeaderSize+4]
}

// verifyOne verifies path and returns the report's only item.
func verifyOne(t *testing.T, path string) verify.Item {
	t.Helper()
	report, err := verify.Verify(path)
	require.NoError(t, err)
	require.Len(t, report.Items, 1, "%+v", report.Items)
	return report.Items[0]
}

// TestVerifySegmentsWhole: a log directory is one log, its segments read in
// order; its item is the directory and counts every segment's records.
func TestVerifySegmentsWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "partition-000000")
	writeSegment(t, dir, 0, "a", "b")
	writeSegment(t, dir, 2, "c")
	writeSegment(t, dir, 3, "d", "e")
	it := verifyOne(t, dir)
	require.Equal(t, verify.StatusOK, it.Status, it.Detail)
	require.Equal(t, verify.KindLog, it.Kind)
	require.Equal(t, dir+string(filepath.Separator), it.Path)
	require.Equal(t, uint64(5), *it.Records)
	require.Contains(t, it.Detail, "5 records in 3 segments, log start 0")

	// A log whose oldest segments were deleted starts at its first
	// segment's base.
	later := filepath.Join(t.TempDir(), "partition-000000")
	writeSegment(t, later, 10, "k")
	writeSegment(t, later, 11)
	it = verifyOne(t, later)
	require.Equal(t, verify.StatusOK, it.Status, it.Detail)
	require.Contains(t, it.Detail, "1 records in 2 segments, log start 10")
}

// TestVerifySegmentsDamage: damage is reported on the directory naming the
// segment file it lies in, with the byte position in that file. Only the
// last segment's unfinished append is a torn tail; the same bytes in a
// sealed segment, or segments that do not follow on from each other, are
// damage that repair never cuts (docs/phase-1-log.md § Torn tails and repair).
func TestVerifySegmentsDamage(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(dir string) string
		pos     int64
		offset  uint64
		records uint64
		torn    bool
	}{
		{"torn tail of the last segment", func(dir string) string {
			p := filepath.Join(dir, segment.SegmentFileName(3))
			appendTo(t, p, tornFrame(5))
			return p
		}, 2 * int64(log.FrameSize(1)), 5, 5, true},
		{"torn frame in a sealed segment", func(dir string) string {
			p := filepath.Join(dir, segment.SegmentFileName(2))
			appendTo(t, p, tornFrame(3))
			return p
		}, int64(log.FrameSize(1)), 3, 3, false},
		{"bad frame in a sealed segment", func(dir string) string {
			p := filepath.Join(dir, segment.SegmentFileName(0))
			appendTo(t, p, badFrame(2))
			return p
		}, 2 * int64(log.FrameSize(1)), 2, 2, false},
		{"gap between segments", func(dir string) string {
			require.NoError(t, os.Remove(filepath.Join(dir, segment.SegmentFileName(2))))
			return filepath.Join(dir, segment.SegmentFileName(0))
		}, 2 * int64(log.FrameSize(1)), 2, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "partition-000000")
			writeSegment(t, dir, 0, "a", "b")
			writeSegment(t, dir, 2, "c")
			writeSegment(t, dir, 3, "d", "e")
			file := tt.damage(dir)
			it := verifyOne(t, dir)
			require.Equal(t, verify.StatusDamaged, it.Status)
			require.Equal(t, dir+string(filepath.Separator), it.Path)
			require.Equal(t, file, it.Segment)
			require.Equal(t, tt.pos, *it.Pos)
			require.Equal(t, tt.offset, *it.Offset)
			require.Equal(t, tt.records, *it.Records)
			require.Equal(t, tt.torn, it.TornTail)
		})
	}
}

// TestVerifySegmentsLegacy: a directory written before segments still holds
// phase 1's log.bin; it is verified as the log it is and said to be not yet
// upgraded. A log.bin beside segment files is refused, as the segment
// package refuses to open it.
func TestVerifySegmentsLegacy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "partition-000000")
	legacy := writeSegment(t, dir, 0, "a", "b")
	require.NoError(t, os.Rename(legacy, filepath.Join(dir, segment.LegacyFileName)))
	it := verifyOne(t, dir)
	require.Equal(t, verify.StatusOK, it.Status, it.Detail)
	require.Equal(t, uint64(2), *it.Records)
	require.Contains(t, it.Detail, "not yet upgraded")

	writeSegment(t, dir, 2, "c")
	it = verifyOne(t, dir)
	require.Equal(t, verify.StatusDamaged, it.Status, it.Detail)
	require.Equal(t, filepath.Join(dir, segment.LegacyFileName), it.Segment)
}

// TestVerifySegmentFile: one segment file named on its own is read with
// offsets from the base in its name.
func TestVerifySegmentFile(t *testing.T) {
	p := writeSegment(t, t.TempDir(), 7, "h", "i")
	it := verifyOne(t, p)
	require.Equal(t, verify.StatusOK, it.Status, it.Detail)
	require.Equal(t, p, it.Path)
	require.Equal(t, uint64(2), *it.Records)
}

// TestVerifyQuarantine: a quarantine file among a replica's segments is
// read with offsets from the first offset its name gives and must hold as
// many records as its name says.
func TestVerifyQuarantine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "partition-000000")
	writeSegment(t, dir, 0, "a", "b")
	var frames []byte
	for off := uint64(2); off < 4; off++ {
		frames = log.AppendFrame(frames, log.Record{Offset: off, Timestamp: 1, Payload: []byte("q")})
	}
	at := time.Unix(0, 42)
	write(t, cluster.QuarantinePath(dir, 2, 4, at), frames)
	write(t, cluster.QuarantinePath(dir, 2, 5, at), frames)
	report, err := verify.Verify(dir)
	require.NoError(t, err)
	got := map[string]verify.Status{}
	for _, it := range report.Items {
		got[key(t, dir, it)] = it.Status
	}
	require.Equal(t, map[string]verify.Status{
		"log ./":                           verify.StatusOK,
		"quarantine quarantine-2-4-42.bin": verify.StatusOK,
		"quarantine quarantine-2-5-42.bin": verify.StatusDamaged,
	}, got)
}

// TestVerifySegmentsRealLog: a log written by the segment package, rolled
// into sealed segments with sidecars and a persisted log start inside a
// segment, verifies OK counting only the records from the start; a
// damaged sidecar is a note (the next open rebuilds it), never damage.
func TestVerifySegmentsRealLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "partition-000000")
	l, err := segment.Open(dir, segment.Options{SegmentBytes: segment.MinSegmentBytes})
	require.NoError(t, err)
	for i := range 30 {
		_, err := l.Append([]byte(strings.Repeat("x", 100) + string(rune('a'+i%26))))
		require.NoError(t, err)
	}
	segs := l.Segments()
	require.Greater(t, len(segs), 3)
	start := segs[1].Base + 1 // inside the second segment
	_, err = l.AdvanceStart(start)
	require.NoError(t, err)
	require.NoError(t, l.Close())

	it := verifyOne(t, dir)
	require.Equal(t, verify.StatusOK, it.Status, it.Detail)
	require.Equal(t, uint64(30)-start, *it.Records)
	require.Contains(t, it.Detail, fmt.Sprintf("log start %d", start))
	require.NotContains(t, it.Detail, "sidecar")

	sc := filepath.Join(dir, segment.SidecarFileName(segs[2].Base))
	data, err := os.ReadFile(sc)
	require.NoError(t, err)
	data[len(data)-1] ^= 0xff // its checksum no longer matches
	require.NoError(t, os.WriteFile(sc, data, 0o644))
	it = verifyOne(t, dir)
	require.Equal(t, verify.StatusOK, it.Status, it.Detail)
	require.Contains(t, it.Detail, "sidecar of "+segment.SegmentFileName(segs[2].Base))
	require.Contains(t, it.Detail, "the next open rebuilds it")
}

// TestVerifyEpochs: in a data directory the cluster wrote, each replica's
// leader-epochs is judged by cluster.ParseEpochsFile. A history it refuses
// is DAMAGED; runs past the log's end are a note, not damage, as opening
// drops them. Once the cluster has opened the replicas again, the refused
// history is set aside as leader-epochs.damaged-<ns>, which is reported
// OK as kept, and nothing is damaged any more.
func TestVerifyEpochs(t *testing.T) {
	root := t.TempDir()
	openCluster := func() *cluster.Cluster {
		c, err := cluster.Open(root)
		require.NoError(t, err)
		for id := 1; id <= 2; id++ {
			_, err := c.StartBroker(id)
			require.NoError(t, err)
		}
		return c
	}
	c := openCluster()
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := cluster.NewProducer(c, "orders")
	for _, p := range []string{"a", "b", "c"} {
		_, err := prod.Send(nil, []byte(p))
		require.NoError(t, err)
	}
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Len(t, st.Followers, 1)

	leaderFile := filepath.Join(cluster.ReplicaDir(root, st.Leader, "orders", 0), cluster.EpochsFileName)
	followerFile := filepath.Join(cluster.ReplicaDir(root, st.Followers[0], "orders", 0), cluster.EpochsFileName)
	data, err := os.ReadFile(leaderFile)
	require.NoError(t, err)
	runs, err := cluster.ParseEpochsFile(data)
	require.NoError(t, err)
	require.NotEmpty(t, runs, "the leader wrote its run down")
	last := runs[len(runs)-1]
	// A run written down just before a crash, before its first record:
	// it starts at the log's end and holds nothing.
	runs = append(runs, cluster.EpochRun{Epoch: last.Epoch + 1, ID: 0xabc, Start: 3})
	require.NoError(t, os.WriteFile(leaderFile, cluster.EncodeEpochsFile(runs), 0o644))
	// The follower's history loses its final newline.
	data, err = os.ReadFile(followerFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(followerFile, data[:len(data)-1], 0o644))

	epochItems := func() map[string]verify.Item {
		t.Helper()
		report, err := verify.Verify(root)
		require.NoError(t, err)
		got := map[string]verify.Item{}
		for _, it := range report.Items {
			if it.Kind == verify.KindEpochs {
				got[it.Path] = it
			}
		}
		return got
	}
	got := epochItems()
	require.Len(t, got, 2, "%+v", got)
	require.Equal(t, verify.StatusOK, got[leaderFile].Status, got[leaderFile].Detail)
	require.Contains(t, got[leaderFile].Detail, fmt.Sprintf("%d runs, the last at epoch %d from offset 3", len(runs), last.Epoch+1))
	require.Contains(t, got[leaderFile].Detail, "1 runs start at or past the log's end (3) and are dropped at open")
	require.Equal(t, verify.StatusDamaged, got[followerFile].Status, got[followerFile].Detail)
	require.Contains(t, got[followerFile].Detail, "no final newline")

	// The cluster opens the replicas again, on the next write: it drops
	// the leader's empty run and sets the follower's history aside.
	c = openCluster()
	_, err = cluster.NewProducer(c, "orders").Send(nil, []byte("d"))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	asides, err := filepath.Glob(followerFile + ".damaged-*")
	require.NoError(t, err)
	require.Len(t, asides, 1, "the cluster set the follower's history aside")
	got = epochItems()
	require.Equal(t, verify.StatusOK, got[asides[0]].Status, got[asides[0]].Detail)
	require.Contains(t, got[asides[0]].Detail, "set aside")
	for path, it := range got {
		require.Equal(t, verify.StatusOK, it.Status, "%s: %s", path, it.Detail)
	}
}

// TestVerifyEpochsNotAHistory: where a leader-epochs belongs, a directory
// or a file larger than cluster.MaxEpochsFileSize is set aside by the
// cluster at open, and reported DAMAGED.
func TestVerifyEpochsNotAHistory(t *testing.T) {
	huge := append([]byte("pystream leader epochs 1\n"), make([]byte, cluster.MaxEpochsFileSize)...)
	for name, place := range map[string]func(path string){
		"a directory": func(path string) { require.NoError(t, os.MkdirAll(path, 0o755)) },
		"huge":        func(path string) { write(t, path, huge) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "partition-000000")
			writeSegment(t, dir, 0, "a")
			path := filepath.Join(dir, cluster.EpochsFileName)
			place(path)
			report, err := verify.Verify(dir)
			require.NoError(t, err)
			var found bool
			for _, it := range report.Items {
				if it.Path == path && it.Kind == verify.KindEpochs {
					found = true
					require.Equal(t, verify.StatusDamaged, it.Status, it.Detail)
					require.Contains(t, it.Detail, "cannot read")
				}
			}
			require.True(t, found, "%+v", report.Items)
		})
	}
}
