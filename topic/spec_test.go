package topic_test

// Black-box tests of the phase-2 guarantees, written from the behavioural
// rules of docs/phase-2-topics.md and docs/design.md alone, without looking
// at how package topic implements them. Each test names the rule it pins
// ("Spec:" states it in words); each would fail if that rule broke.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
)

// specTree lists every entry under root with its content (files) so a test
// can assert that nothing at all changed on disk.
func specTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out, err := logtest.Snapshot(root)
	require.NoError(t, err)
	return out
}

func specOpen(t *testing.T, root, name string, n int) *topic.Topic {
	t.Helper()
	tp, err := topic.Open(root, name, n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tp.Close() })
	return tp
}

// Spec: partitions are independent logs whose offsets are partition-local
// and each start at 0; "partition 0 / offset 5" and "partition 1 / offset 5"
// are different records.
func TestSpecTopicOffsetsArePartitionLocal(t *testing.T) {
	tp := specOpen(t, t.TempDir(), "events", 3)
	// With three partitions and nil keys, appends go 0,1,2,0,1,2,...
	want := map[int]uint64{}
	for i := range 9 {
		res, err := tp.Append(nil, []byte(fmt.Sprintf("r%d", i)))
		require.NoError(t, err)
		require.Equal(t, want[res.Partition], res.Offset, "append %d", i)
		require.Equal(t, res.Offset, res.Record.Offset)
		want[res.Partition]++
	}
	require.Len(t, want, 3)
	for p := range 3 {
		recs, err := tp.Read(p, 0, 100)
		require.NoError(t, err)
		require.Len(t, recs, 3)
		for i, r := range recs {
			require.Equal(t, uint64(i), r.Offset)
			require.Equal(t, fmt.Sprintf("r%d", i*3+p), string(r.Payload))
		}
	}
	// The same offset in two partitions is two different records.
	a, err := tp.Read(0, 1, 1)
	require.NoError(t, err)
	b, err := tp.Read(1, 1, 1)
	require.NoError(t, err)
	require.NotEqual(t, a[0].Payload, b[0].Payload)
}

// Spec: ordering is guaranteed within a partition — records keep the order
// the partition accepted them in and offsets grow by one — even when many
// goroutines append at once ("thread-safe routing and appends").
func TestSpecTopicOrderingWithinPartitionConcurrent(t *testing.T) {
	tp := specOpen(t, t.TempDir(), "orders", 4)
	const writers, each = 6, 60
	type landed struct {
		part int
		off  uint64
	}
	got := make([][]landed, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []byte(fmt.Sprintf("writer-%d", w))
			for i := range each {
				res, err := tp.Append(key, []byte(fmt.Sprintf("%d:%d", w, i)))
				if err != nil {
					t.Error(err)
					return
				}
				got[w] = append(got[w], landed{res.Partition, res.Offset})
			}
		}()
	}
	wg.Wait()
	for w := range writers {
		want := topic.PartitionForKey([]byte(fmt.Sprintf("writer-%d", w)), 4)
		for i := 1; i < len(got[w]); i++ {
			require.Equal(t, want, got[w][i].part)
			require.Greater(t, got[w][i].off, got[w][i-1].off, "a key's records stay in send order")
		}
	}
	total := 0
	for p := range 4 {
		recs, err := tp.Read(p, 0, writers*each+1)
		require.NoError(t, err)
		last := map[int]int{}
		for i, r := range recs {
			require.Equal(t, uint64(i), r.Offset, "offsets are dense from 0")
			var w, seq int
			_, err := fmt.Sscanf(string(r.Payload), "%d:%d", &w, &seq)
			require.NoError(t, err)
			if prev, ok := last[w]; ok {
				require.Equal(t, prev+1, seq, "partition order is acceptance order")
			}
			last[w] = seq
		}
		total += len(recs)
	}
	require.Equal(t, writers*each, total)
}

// Spec: routing is sha256(key) as a big-endian integer modulo the partition
// count, stable across processes and restarts; docs/design.md § Keyed routing
// gives golden values. A key lands on the same partition after the topic is
// reopened.
func TestSpecTopicKeyedRoutingStableAcrossReopen(t *testing.T) {
	golden := []struct {
		key  []byte
		want [3]int // for 3, 7, 64 partitions
	}{
		{[]byte("user-123"), [3]int{2, 4, 24}},
		{[]byte{}, [3]int{1, 1, 21}},
		{[]byte("orders"), [3]int{1, 1, 25}},
		{[]byte{0x00, 0xff}, [3]int{2, 4, 56}},
	}
	for _, g := range golden {
		for i, n := range []int{3, 7, 64} {
			require.Equal(t, g.want[i], topic.PartitionForKey(g.key, n), "key %q n=%d", g.key, n)
		}
	}

	root := t.TempDir()
	keys := [][]byte{[]byte("user-123"), []byte("a"), []byte("b"), []byte("c"), {}, {0x00, 0xff}}
	first := map[string]int{}
	tp, err := topic.Open(root, "events", 7)
	require.NoError(t, err)
	for _, k := range keys {
		res, err := tp.Append(k, []byte("x"))
		require.NoError(t, err)
		require.Equal(t, topic.PartitionForKey(k, 7), res.Partition)
		first[string(k)] = res.Partition
	}
	require.NoError(t, tp.Close())

	tp = specOpen(t, root, "events", 7)
	for _, k := range keys {
		res, err := tp.Append(k, []byte("y"))
		require.NoError(t, err)
		require.Equal(t, first[string(k)], res.Partition, "key %q moved after reopen", k)
	}
}

// Spec: a nil key means round robin across partitions from an in-memory
// cursor that begins again at partition 0 after a restart.
func TestSpecTopicRoundRobinRestartsAtZeroAfterReopen(t *testing.T) {
	root := t.TempDir()
	tp, err := topic.Open(root, "events", 3)
	require.NoError(t, err)
	var parts []int
	for range 4 {
		res, err := tp.Append(nil, []byte("x"))
		require.NoError(t, err)
		parts = append(parts, res.Partition)
	}
	require.Equal(t, []int{0, 1, 2, 0}, parts)
	require.NoError(t, tp.Close())

	tp = specOpen(t, root, "events", 3)
	res, err := tp.Append(nil, []byte("x"))
	require.NoError(t, err)
	require.Equal(t, 0, res.Partition, "the cursor is not persisted")
	require.NoDirExists(t, filepath.Join(root, "events", "cursor"))
}

// Spec: round robin is safe under concurrency — keyless appends from many
// goroutines still spread exactly evenly (each partition gets its turn).
func TestSpecTopicRoundRobinConcurrentIsEven(t *testing.T) {
	tp := specOpen(t, t.TempDir(), "events", 3)
	const goroutines, each = 6, 30
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := tp.Append(nil, []byte("x")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for p := range 3 {
		n, err := tp.NextOffset(p)
		require.NoError(t, err)
		require.Equal(t, uint64(goroutines*each/3), n, "partition %d", p)
	}
}

// Spec: b"" is a real key, routed deterministically like any other key —
// never confused with "no key".
func TestSpecTopicEmptyKeyIsARealKey(t *testing.T) {
	tp := specOpen(t, t.TempDir(), "events", 3)
	want := topic.PartitionForKey([]byte{}, 3)
	require.Equal(t, 1, want)
	for range 4 {
		res, err := tp.Append([]byte{}, []byte("x"))
		require.NoError(t, err)
		require.Equal(t, want, res.Partition)
	}
	// The empty-key appends did not move the round-robin cursor.
	res, err := tp.Append(nil, []byte("x"))
	require.NoError(t, err)
	require.Equal(t, 0, res.Partition)

	// And through a batch the same rule holds.
	out, err := tp.AppendBatch([]topic.Message{{Key: []byte{}, Payload: []byte("a")}, {Key: nil, Payload: []byte("b")}})
	require.NoError(t, err)
	require.Equal(t, want, out[0].Partition)
	require.Equal(t, 1, out[1].Partition)
}

// Spec: topic names are 1-249 of letters, digits, '.', '_', '-' and never
// "." or ".." (docs/design.md § Names), so a name can never escape its root
// directory; a bad name is rejected before any file is touched.
func TestSpecTopicNamesCannotEscapeRoot(t *testing.T) {
	bad := []string{
		"", ".", "..", "a/b", "../x", "/abs", "a b", " ", "a\\b", "tab\tname",
		"new\nline", "nul\x00", "caf\u00e9", strings.Repeat("a", 250), "../../etc",
		"a/../b", "x:y", "*",
	}
	for _, name := range bad {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			parent := t.TempDir()
			root := filepath.Join(parent, "root")
			require.NoError(t, os.Mkdir(root, 0o755))
			before := specTree(t, parent)
			require.ErrorIs(t, topic.ValidateName(name), topic.ErrInvalidName)
			tp, err := topic.Open(root, name, 2)
			require.ErrorIs(t, err, topic.ErrInvalidName)
			require.Nil(t, tp)
			_, err = topic.OpenExisting(root, name, topic.Options{})
			require.ErrorIs(t, err, topic.ErrInvalidName)
			require.Equal(t, before, specTree(t, parent), "nothing created")
		})
	}
	for _, name := range []string{"a", "A-b_c.d", "...", ".hidden", strings.Repeat("z", 249), "0"} {
		require.NoError(t, topic.ValidateName(name), "%q", name)
	}
	root := t.TempDir()
	tp := specOpen(t, root, strings.Repeat("z", 249), 1)
	require.DirExists(t, filepath.Join(root, tp.Name()))
}

// Spec: a topic has a fixed, positive partition count; a non-positive one is
// refused before anything is created.
func TestSpecTopicPartitionCountMustBePositive(t *testing.T) {
	for _, n := range []int{0, -1, -1 << 40} {
		root := t.TempDir()
		_, err := topic.Open(root, "events", n)
		require.Error(t, err)
		_, statErr := os.Stat(filepath.Join(root, "events"))
		require.ErrorIs(t, statErr, fs.ErrNotExist)
	}
}

// Spec: partition ids are 0..count-1; anything else is an error, never a
// panic and never a new partition.
func TestSpecTopicPartitionOutOfRange(t *testing.T) {
	root := t.TempDir()
	tp := specOpen(t, root, "events", 2)
	before := specTree(t, root)
	for _, p := range []int{-1, 2, 1 << 30} {
		_, err := tp.Read(p, 0, 1)
		require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
		_, err = tp.NextOffset(p)
		require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
	}
	require.Equal(t, before, specTree(t, root))
}

// docs/design.md § Data directory layout: <root>/<name>/topic.meta (JSON with
// version, name, partition_count) and partition-NNNNNN/ of segment files; records never
// go through JSON.
func TestSpecTopicOnDiskLayout(t *testing.T) {
	root := t.TempDir()
	tp := specOpen(t, root, "events", 3)
	_, err := tp.Append([]byte("k"), []byte(`{"not":"json-encoded"}`))
	require.NoError(t, err)

	raw, err := os.ReadFile(filepath.Join(root, "events", "topic.meta"))
	require.NoError(t, err)
	var meta map[string]any
	require.NoError(t, json.Unmarshal(raw, &meta))
	require.Equal(t, map[string]any{"version": 1.0, "name": "events", "partition_count": 3.0}, meta)
	for p := range 3 {
		require.FileExists(t, filepath.Join(root, "events", fmt.Sprintf("partition-%06d", p), segment.SegmentFileName(0)))
	}
	entries, err := os.ReadDir(filepath.Join(root, "events"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"partition-000000", "partition-000001", "partition-000002", "topic.meta"}, names)
}

// specMetaCases are topic.meta files that must be refused when reopening
// "events" with 3 partitions.
var specMetaCases = []struct {
	name string
	meta string
}{
	{"empty file", ""},
	{"bad json", `{"version": 1, "name": "events", `},
	{"not an object", `[1, "events", 3]`},
	{"null", `null`},
	{"missing version", `{"name": "events", "partition_count": 3}`},
	{"missing name", `{"version": 1, "partition_count": 3}`},
	{"missing partition_count", `{"version": 1, "name": "events"}`},
	{"unknown version", `{"version": 2, "name": "events", "partition_count": 3}`},
	{"version zero", `{"version": 0, "name": "events", "partition_count": 3}`},
	{"version as string", `{"version": "1", "name": "events", "partition_count": 3}`},
	{"name wrong type", `{"version": 1, "name": 7, "partition_count": 3}`},
	{"count as string", `{"version": 1, "name": "events", "partition_count": "3"}`},
	{"count fractional", `{"version": 1, "name": "events", "partition_count": 3.5}`},
	{"count zero", `{"version": 1, "name": "events", "partition_count": 0}`},
	{"count negative", `{"version": 1, "name": "events", "partition_count": -3}`},
	{"count disagrees", `{"version": 1, "name": "events", "partition_count": 2}`},
	{"unsafe name", `{"version": 1, "name": "../events", "partition_count": 3}`},
	{"other name", `{"version": 1, "name": "orders", "partition_count": 3}`},
	{"null name", `{"version": 1, "name": null, "partition_count": 3}`},
	{"trailing garbage", `{"version": 1, "name": "events", "partition_count": 3} x`},
}

// Spec: reopening validates topic.meta before touching any partition: bad
// JSON, missing fields, an unsafe stored name or a disagreeing partition
// count raise a metadata error. Damaged metadata is reported, never
// silently repaired or overwritten — and no partition is created or opened.
func TestSpecTopicDamagedMetadataNeverRewritten(t *testing.T) {
	for _, tc := range specMetaCases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tp, err := topic.Open(root, "events", 3)
			require.NoError(t, err)
			_, err = tp.Append(nil, []byte("kept"))
			require.NoError(t, err)
			require.NoError(t, tp.Close())
			metaPath := filepath.Join(root, "events", "topic.meta")
			require.NoError(t, os.WriteFile(metaPath, []byte(tc.meta), 0o644))
			before := specTree(t, root)

			_, err = topic.Open(root, "events", 3)
			var me *topic.MetadataError
			require.ErrorAs(t, err, &me)
			require.NotEmpty(t, me.Path)
			require.Equal(t, before, specTree(t, root), "nothing repaired or created")

			_, err = topic.OpenExisting(root, "events", topic.Options{})
			if tc.name != "count disagrees" {
				require.ErrorAs(t, err, &me)
			}
			require.Equal(t, before, specTree(t, root))
		})
	}
}

// Spec: metadata is validated BEFORE any partition is touched. With a bad
// topic.meta and a missing (or damaged) partition, the error is the
// metadata one, and the partition is not recreated.
func TestSpecTopicMetadataCheckedBeforePartitions(t *testing.T) {
	root := t.TempDir()
	tp, err := topic.Open(root, "events", 3)
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	dir := filepath.Join(root, "events")
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "partition-000001")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "partition-000002", segment.SegmentFileName(0)), []byte{1, 2, 3}, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "topic.meta"), []byte(`{"version": 9}`), 0o644))
	before := specTree(t, root)

	_, err = topic.Open(root, "events", 3)
	var me *topic.MetadataError
	require.ErrorAs(t, err, &me)
	var ce *log.CorruptionError
	require.False(t, errors.As(err, &ce), "a partition was opened before metadata was validated")
	require.Equal(t, before, specTree(t, root))

	// With valid metadata the missing partition is reported, not recreated.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "topic.meta"),
		[]byte(`{"version": 1, "name": "events", "partition_count": 3}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "partition-000002", segment.SegmentFileName(0)), nil, 0o644))
	before = specTree(t, root)
	_, err = topic.Open(root, "events", 3)
	require.ErrorIs(t, err, topic.ErrMissingPartition)
	require.Equal(t, before, specTree(t, root))
}

// Spec: topic.meta is written to a temp file, fsync-ed and atomically
// renamed: a failure at any step of creation leaves either no topic
// (OpenExisting finds none) or a complete, valid one — never a half-written
// metadata file — and opening again afterwards succeeds.
func TestSpecTopicCreationFailureLeavesNoTopicOrValidOne(t *testing.T) {
	ops := []logtest.Op{logtest.OpOpen, logtest.OpWrite, logtest.OpSync, logtest.OpRename, logtest.OpMkdir, logtest.OpSyncDir, logtest.OpClose}
	for _, op := range ops {
		for n := 1; n <= 12; n++ {
			t.Run(fmt.Sprintf("%s#%d", op, n), func(t *testing.T) {
				root := t.TempDir()
				ffs := logtest.NewFaultFS(nil)
				ffs.SetFault(logtest.FailNth(op, n))
				tp, err := topic.OpenWithOptions(root, "events", 2, topic.Options{FS: ffs})
				ffs.SetFault(nil)
				if err == nil {
					require.NoError(t, tp.Close())
				}
				metaPath := filepath.Join(root, "events", "topic.meta")
				if raw, rerr := os.ReadFile(metaPath); rerr == nil {
					require.JSONEq(t, `{"version": 1, "name": "events", "partition_count": 2}`, string(raw))
				} else {
					_, err := topic.OpenExisting(root, "events", topic.Options{})
					require.ErrorIs(t, err, topic.ErrTopicNotFound)
				}
				tp, err = topic.Open(root, "events", 2)
				require.NoError(t, err)
				res, err := tp.Append(nil, []byte("x"))
				require.NoError(t, err)
				require.Equal(t, uint64(0), res.Offset)
				require.NoError(t, tp.Close())
			})
		}
	}
}

// Spec: payloads are opaque bytes; what Read returns is exactly what was
// appended, and the caller may keep or change either slice safely.
func TestSpecTopicPayloadBytesRoundTrip(t *testing.T) {
	tp := specOpen(t, t.TempDir(), "events", 1)
	payloads := [][]byte{{}, {0}, {0xff, 0xfe, 0x00}, []byte("\"quoted\""), bytes.Repeat([]byte{0xab}, 4096)}
	for _, p := range payloads {
		in := append([]byte(nil), p...)
		_, err := tp.Append(nil, in)
		require.NoError(t, err)
		for i := range in {
			in[i] ^= 0xff // the caller reusing its buffer must not change the record
		}
	}
	recs, err := tp.Read(0, 0, 100)
	require.NoError(t, err)
	require.Len(t, recs, len(payloads))
	for i, r := range recs {
		require.True(t, bytes.Equal(payloads[i], r.Payload), "record %d", i)
	}
}

// Rule: Close may be called twice; operations after Close fail with an error
// wrapping log.ErrClosed rather than panicking.
func TestSpecTopicClosedRefusesWork(t *testing.T) {
	tp, err := topic.Open(t.TempDir(), "events", 2)
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	require.NoError(t, tp.Close())
	_, err = tp.Append(nil, []byte("x"))
	require.ErrorIs(t, err, log.ErrClosed)
	_, err = tp.Read(0, 0, 1)
	require.Error(t, err)
}
