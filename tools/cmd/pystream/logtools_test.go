package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/stretchr/testify/require"
)

// goldenPayloads cover a plain payload, an empty one, bytes that need
// escaping and one longer than the preview.
var goldenPayloads = []string{"hello", "", "\x00\xff\n\"tab\t", strings.Repeat("0123456789", 4)}

// TestCLILogDumpGolden pins the dump format (docs/cli.md: offset, byte position,
// timestamp and date, size, payload preview) against golden files.
func TestCLILogDumpGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.bin")
	writeLog(t, path, goldenPayloads...)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"dump.golden", nil},
		{"dump-print-data.golden", []string{"--print-data"}},
		{"dump-json.golden", []string{"--json"}},
		{"dump-json-print-data.golden", []string{"--json", "--print-data"}},
	} {
		r := run(t, "", "", append([]string{"log", "dump", path}, tc.args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Empty(t, r.stderr)
		golden(t, tc.golden, r.stdout)
	}
}

// TestCLILogDumpJSONRoundTrip: --json --print-data gives back every payload
// byte for byte.
func TestCLILogDumpJSONRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.bin")
	recs := writeLog(t, path, goldenPayloads...)
	r := run(t, "", "", "log", "dump", "--json", "--print-data", path)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, len(recs))
	for i, line := range lines {
		var got struct {
			Offset    uint64 `json:"offset"`
			Timestamp int64  `json:"timestamp"`
			Payload   []byte `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		require.Equal(t, recs[i].Offset, got.Offset)
		require.Equal(t, recs[i].Timestamp, got.Timestamp)
		require.Equal(t, string(recs[i].Payload), string(got.Payload))
	}
}

// frameEnd is the byte position just past the frames of payloads.
func frameEnd(payloads ...string) int64 {
	var n int64
	for _, p := range payloads {
		n += int64(log.FrameSize(len(p)))
	}
	return n
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
	b := log.AppendFrame(nil, log.Record{Offset: offset, Timestamp: 1, Payload: []byte(strings.Repeat("p", 50))})
	return b[:log.HeaderSize+10]
}

// TestCLILogDumpStopsAtDamage: the records before the damage are printed,
// then the position and reason go to stderr and the exit code is 1.
func TestCLILogDumpStopsAtDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.bin")
	writeLog(t, path, "a", "b")
	appendBytes(t, path, append(badFrame(2), make([]byte, 8)...))
	r := run(t, "", "", "log", "dump", path)
	require.Equal(t, 1, r.code)
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 2)
	require.Contains(t, r.stderr, "at byte 50 (offset 2)")
}

// verifyItem is one line of `log verify --json`.
type verifyItem struct {
	Status   string  `json:"status"`
	Kind     string  `json:"kind"`
	Path     string  `json:"path"`
	Segment  string  `json:"segment"`
	Position *int64  `json:"position"`
	Offset   *uint64 `json:"offset"`
	Lag      uint64  `json:"lag"`
	TornTail bool    `json:"torn_tail"`
}

func verifyJSON(t *testing.T, dir string, path string, wantCode int) map[string]verifyItem {
	t.Helper()
	r := run(t, dir, "", "log", "verify", "--json", path)
	require.Equal(t, wantCode, r.code, r.stdout+r.stderr)
	items := make(map[string]verifyItem)
	for line := range strings.SplitSeq(strings.TrimSpace(r.stdout), "\n") {
		var it verifyItem
		require.NoError(t, json.Unmarshal([]byte(line), &it), line)
		items[it.Kind+" "+it.Path] = it
	}
	return items
}

// TestCLILogVerifyDamagedLog: a damaged log exits 1 and the report gives the
// byte position and the offset of the first bad frame.
func TestCLILogVerifyDamagedLog(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, filepath.Join(dir, "log.bin"), "first", "second", "third")
	pos := frameEnd("first", "second", "third")
	appendBytes(t, filepath.Join(dir, "log.bin"), append(badFrame(3), []byte("more")...))

	items := verifyJSON(t, dir, "log.bin", 1)
	it := items["log log.bin"]
	require.Equal(t, "DAMAGED", it.Status)
	require.NotNil(t, it.Position)
	require.Equal(t, pos, *it.Position)
	require.Equal(t, uint64(3), *it.Offset)
	require.False(t, it.TornTail)

	r := run(t, dir, "", "log", "verify", "log.bin")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stdout, "DAMAGED")
	require.Contains(t, r.stdout, fmt.Sprintf("at byte %d, offset 3", pos))
	require.Contains(t, r.stderr, "problems found")
}

// cluster lays out a data directory by hand: three brokers, topic orders
// with two partitions at replication factor 2 (docs/design.md § Placement).
type cluster struct {
	root string
	// leader holds each partition's leader records.
	leader [2][]log.Record
}

const clusterMeta = `{"version": 1, "brokers": [1, 2, 3], "topics": {"orders": {"partition_count": 2, "replication_factor": 2, "partitions": [
  {"partition": 0, "leader": 1, "followers": [2], "active": [%s]},
  {"partition": 1, "leader": 2, "followers": [3], "active": [2, 3]}]}}}`

// replicaDir is a replica's log directory; replicaSegment its first
// segment file.
func replicaDir(root string, broker, partition int) string {
	return filepath.Join(root, "broker-00000"+string(rune('0'+broker)), "topics", "orders", "partition-00000"+string(rune('0'+partition)))
}

func replicaSegment(root string, broker, partition int) string {
	return filepath.Join(replicaDir(root, broker, partition), segment.SegmentFileName(0))
}

// newCluster writes cluster.meta (active set of partition 0 given), the
// leaders' logs, an in-sync follower for partition 0 and a follower one
// record behind for partition 1 (a directory written before segments,
// still holding log.bin), a stand-alone topic and an offset file.
func newCluster(t *testing.T, active0 string) *cluster {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "cluster.meta"), strings.Replace(clusterMeta, "%s", active0, 1))
	c := &cluster{root: root}
	c.leader[0] = writeLog(t, replicaSegment(root, 1, 0), "a", "b", "c")
	c.leader[1] = writeLog(t, replicaSegment(root, 2, 1), "x", "y")
	writeReplica(t, replicaSegment(root, 2, 0), c.leader[0])
	writeReplica(t, filepath.Join(replicaDir(root, 3, 1), segment.LegacyFileName), c.leader[1][:1])

	writeFile(t, filepath.Join(root, "events", "topic.meta"), `{"version": 1, "name": "events", "partition_count": 2}`)
	writeLog(t, filepath.Join(root, "events", "partition-000000", segment.SegmentFileName(0)), "e0")
	writeLog(t, filepath.Join(root, "events", "partition-000001", segment.SegmentFileName(0)))
	writeFile(t, filepath.Join(root, "offsets", "worker", "events", "partition-000000.offset"), `{"version": 1, "offset": 1}`)
	return c
}

// TestCLILogVerifyHealthyDataDir: every file of a healthy data directory is
// OK; a follower behind its leader is lag, which is not damage (exit 0).
func TestCLILogVerifyHealthyDataDir(t *testing.T) {
	c := newCluster(t, "1, 2")
	items := verifyJSON(t, c.root, ".", 0)
	for key, it := range items {
		if key == "replica broker-000003/topics/orders/partition-000001/" {
			require.Equal(t, "LAG", it.Status)
			require.Equal(t, uint64(1), it.Lag)
			continue
		}
		require.Equal(t, "OK", it.Status, key)
	}
	require.Contains(t, items, "cluster.meta cluster.meta")
	require.Contains(t, items, "topic.meta events/topic.meta")
	require.Contains(t, items, "offset offsets/worker/events/partition-000000.offset")
	require.Contains(t, items, "replica broker-000002/topics/orders/partition-000000/")
	require.Contains(t, items, "log broker-000001/topics/orders/partition-000000/")

	// One broker's directory alone: its follower is compared with the
	// leader on another broker.
	items = verifyJSON(t, c.root, "broker-000002", 0)
	require.Equal(t, "OK", items["replica broker-000002/topics/orders/partition-000000/"].Status)

	// One topic directory.
	verifyJSON(t, c.root, "events", 0)
}

// TestCLILogVerifyDivergedFollower: an active follower whose record differs
// from the leader's (same offset, other payload) is diverged (exit 1); the
// same follower outside the active set is what a failover leaves behind and
// is not a problem.
func TestCLILogVerifyDivergedFollower(t *testing.T) {
	for _, tc := range []struct {
		active, status string
		code           int
	}{{"1, 2", "DIVERGED", 1}, {"1", "INACTIVE", 0}} {
		c := newCluster(t, tc.active)
		follower := replicaSegment(c.root, 2, 0)
		require.NoError(t, os.Remove(follower))
		changed := append([]log.Record(nil), c.leader[0]...)
		changed[1].Payload = []byte("B")
		writeReplica(t, follower, changed)

		items := verifyJSON(t, c.root, ".", tc.code)
		it := items["replica broker-000002/topics/orders/partition-000000/"]
		require.Equal(t, tc.status, it.Status)
		require.Equal(t, uint64(1), *it.Offset)
		require.Equal(t, "OK", items["log broker-000002/topics/orders/partition-000000/"].Status, "the follower's log itself is whole")
	}
}

// TestCLILogVerifyBadMetadata: damaged metadata and a missing partition are
// reported (exit 1).
func TestCLILogVerifyBadMetadata(t *testing.T) {
	c := newCluster(t, "1, 2")
	writeFile(t, filepath.Join(c.root, "offsets", "worker", "events", "partition-000001.offset"), `{"version": 1, "offset": -4}`)
	require.NoError(t, os.RemoveAll(filepath.Join(c.root, "events", "partition-000001")))
	items := verifyJSON(t, c.root, ".", 1)
	require.Equal(t, "DAMAGED", items["offset offsets/worker/events/partition-000001.offset"].Status)
	require.Equal(t, "MISSING", items["log events/partition-000001/"].Status)

	writeFile(t, filepath.Join(c.root, "cluster.meta"), `{"version": 1, "brokers": [1]`)
	items = verifyJSON(t, c.root, "broker-000001", 1)
	require.Equal(t, "DAMAGED", items["cluster.meta cluster.meta"].Status)
}

// TestCLILogVerifyRefusesWhatOpenRefuses: the files the verifier once
// passed while topic.Open refused them (a duplicate "name", an unknown
// field, partition_count 100000000), and a cluster.meta with a repeated
// key, are damage to `pystream log verify` too (exit 1), because it reads
// them with the modules' own parsers.
func TestCLILogVerifyRefusesWhatOpenRefuses(t *testing.T) {
	for _, doc := range []string{
		`{"version": 1, "name": "events", "name": "events", "partition_count": 2}`,
		`{"version": 1, "name": "events", "partition_count": 2, "retention": 7}`,
		`{"version": 1, "name": "events", "partition_count": 100000000}`,
	} {
		c := newCluster(t, "1, 2")
		writeFile(t, filepath.Join(c.root, "events", "topic.meta"), doc)
		items := verifyJSON(t, c.root, "events", 1)
		require.Equal(t, "DAMAGED", items["topic.meta events/topic.meta"].Status, doc)
	}
	c := newCluster(t, "1, 2")
	meta := strings.Replace(clusterMeta, "%s", "1, 2", 1)
	writeFile(t, filepath.Join(c.root, "cluster.meta"), strings.Replace(meta, `"brokers": [1, 2, 3]`, `"brokers": [1, 2, 3], "brokers": [1, 2, 3]`, 1))
	items := verifyJSON(t, c.root, ".", 1)
	require.Equal(t, "DAMAGED", items["cluster.meta cluster.meta"].Status)
}

// TestCLILogRepairTornTail: a torn tail is reported by verify as damage,
// repaired with --yes (a backup kept), and verify then passes with the whole
// records intact.
func TestCLILogRepairTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.bin")
	writeLog(t, path, "one", "two")
	appendBytes(t, path, tornFrame(2))

	it := verifyJSON(t, dir, "log.bin", 1)["log log.bin"]
	require.True(t, it.TornTail)
	require.Equal(t, frameEnd("one", "two"), *it.Position)

	r := run(t, dir, "", "log", "repair", "--yes", "log.bin")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "removed 34 bytes after byte 54")
	backups, err := filepath.Glob(path + ".broken-*")
	require.NoError(t, err)
	require.Len(t, backups, 1)

	verifyJSON(t, dir, "log.bin", 0)
	r = run(t, dir, "", "log", "dump", "log.bin")
	require.Equal(t, 0, r.code)
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 2)

	r = run(t, dir, "", "log", "repair", "log.bin")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "nothing to repair")
}

// TestCLILogRepairConfirmation: without --yes only an explicit "y" repairs;
// anything else, or no answer, leaves the file as it was (exit 1).
func TestCLILogRepairConfirmation(t *testing.T) {
	for _, tc := range []struct {
		answer string
		code   int
	}{{"", 1}, {"n\n", 1}, {"maybe\n", 1}, {"y\n", 0}, {"YES\n", 0}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "log.bin")
		writeLog(t, path, "one")
		appendBytes(t, path, tornFrame(1))
		before, err := os.ReadFile(path)
		require.NoError(t, err)

		r := run(t, dir, tc.answer, "log", "repair", "log.bin")
		require.Equal(t, tc.code, r.code, "answer %q: %s", tc.answer, r.stderr)
		require.Contains(t, r.stderr, "[y/N]")
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		if tc.code == 0 {
			require.Len(t, after, int(frameEnd("one")))
		} else {
			require.Equal(t, before, after, "answer %q changed the file", tc.answer)
		}
	}
}

// TestCLILogRepairRefusesOtherDamage: damage that is not a torn tail is
// never repaired.
func TestCLILogRepairRefusesOtherDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.bin")
	writeLog(t, path, "one")
	appendBytes(t, path, append(badFrame(1), 'x'))
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	r := run(t, dir, "", "log", "repair", "--yes", "log.bin")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "not a torn tail")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

// TestCLILogRepairRefusedWhileLocked: while a process holds the flock on the
// data directory's .lock (as a running server does), repair refuses and
// changes nothing; once the lock is released it proceeds.
func TestCLILogRepairRefusedWhileLocked(t *testing.T) {
	data := t.TempDir()
	path := filepath.Join(data, "broker-000001", "topics", "t", "partition-000000", segment.SegmentFileName(0))
	writeLog(t, path, "one")
	appendBytes(t, path, tornFrame(1))
	lockPath := filepath.Join(data, ".lock")
	writeFile(t, lockPath, "4242\n")
	lock, err := os.Open(lockPath)
	require.NoError(t, err)
	defer lock.Close()
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	r := run(t, "", "", "log", "repair", "--yes", path)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "pid 4242")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)

	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_UN))
	r = run(t, "", "", "log", "repair", "--yes", path)
	require.Equal(t, 0, r.code, r.stderr)
}
