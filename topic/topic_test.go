package topic

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// docs/phase-2-topics.md § On-disk layout: <root>/<name>/topic.meta and one
// partition-NNNNNN/ with its first segment per partition; topic.meta bytes are golden.
func TestTopicLayoutAndMetadataGolden(t *testing.T) {
	root := t.TempDir()
	tp := openT(t, root, "events", 3)
	require.Equal(t, "events", tp.Name())
	require.Equal(t, 3, tp.PartitionCount())
	require.Equal(t, filepath.Join(root, "events"), tp.Dir())
	require.Equal(t, []string{
		"events/",
		"events/partition-000000/", "events/partition-000000/00000000000000000000.log",
		"events/partition-000001/", "events/partition-000001/00000000000000000000.log",
		"events/partition-000002/", "events/partition-000002/00000000000000000000.log",
		"events/topic.meta",
	}, tree(t, root))

	got := readFile(t, filepath.Join(root, "events", "topic.meta"))
	golden := filepath.Join("testdata", "topic.meta.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	require.Equal(t, string(readFile(t, golden)), string(got))
	m, err := ParseMetadata(got)
	require.NoError(t, err)
	require.Equal(t, Metadata{Version: 1, Name: "events", PartitionCount: 3}, m)
}

// docs/design.md § Data directory layout: partition ids have six digits, so
// 12 partitions sort.
func TestTopicPartitionDirName(t *testing.T) {
	require.Equal(t, "partition-000000", PartitionDir(0))
	require.Equal(t, "partition-000011", PartitionDir(11))
	require.Equal(t, "partition-123456", PartitionDir(123456))
	require.Equal(t, filepath.Join("d", "partition-000011"), PartitionLogDir("d", 11))
}

// ParsePartitionDir accepts exactly the names PartitionDir produces.
func TestTopicParsePartitionDir(t *testing.T) {
	for _, c := range []struct {
		name string
		p    int
		ok   bool
	}{
		{"partition-000000", 0, true},
		{"partition-000042", 42, true},
		{"partition-999999", 999999, true},
		{"partition-42", 0, false},
		{"partition--00001", 0, false},
		{"partition-+00001", 0, false},
		{"partition-00000a", 0, false},
		{"partition-000000.offset", 0, false},
		{"log.bin", 0, false},
		{"", 0, false},
	} {
		p, ok := ParsePartitionDir(c.name)
		require.Equal(t, c.ok, ok, c.name)
		require.Equal(t, c.p, p, c.name)
	}
}

// docs/design.md § Keyless routing: keyless records go round robin from
// partition 0, and the cursor restarts at 0 after a reopen (it lives in
// memory only).
func TestTopicRoundRobinRestartsAfterReopen(t *testing.T) {
	root := t.TempDir()
	tp, err := Open(root, "rr", 3)
	require.NoError(t, err)
	var got []int
	for range 5 {
		res, err := tp.Append(nil, []byte("x"))
		require.NoError(t, err)
		got = append(got, res.Partition)
	}
	require.Equal(t, []int{0, 1, 2, 0, 1}, got)
	require.NoError(t, tp.Close())

	tp = openT(t, root, "rr", 3)
	res, err := tp.Append(nil, []byte("y"))
	require.NoError(t, err)
	require.Equal(t, 0, res.Partition)
	require.Equal(t, uint64(2), res.Offset, "partition 0 already held 2 records")
}

// docs/phase-2-topics.md § Routing: b"" is a real key, routed like any other;
// None (nil) is round robin. The empty key goes to partition 1 of 3 (golden).
func TestTopicEmptyKeyVersusNilKey(t *testing.T) {
	tp := openT(t, t.TempDir(), "keys", 3)
	for range 4 {
		res, err := tp.Append([]byte{}, []byte("e"))
		require.NoError(t, err)
		require.Equal(t, 1, res.Partition)
	}
	var parts []int
	for range 3 {
		res, err := tp.Append(nil, []byte("n"))
		require.NoError(t, err)
		parts = append(parts, res.Partition)
	}
	require.Equal(t, []int{0, 1, 2}, parts, "keyed appends do not move the round-robin cursor")
}

// docs/phase-2-topics.md § Partitions and partition-local offsets: offsets
// are partition-local, each partition from 0; the returned record is the
// stored one.
func TestTopicPartitionLocalOffsets(t *testing.T) {
	tp := openT(t, t.TempDir(), "local", 3)
	want := map[int]uint64{}
	for i := range 12 {
		res, err := tp.Append([]byte(fmt.Sprintf("k%d", i)), []byte(fmt.Sprintf("v%d", i)))
		require.NoError(t, err)
		require.Equal(t, want[res.Partition], res.Offset)
		require.Equal(t, res.Offset, res.Record.Offset)
		require.Equal(t, []byte(fmt.Sprintf("v%d", i)), res.Record.Payload)
		want[res.Partition]++
	}
	for p := range 3 {
		recs, err := tp.Read(p, 0, 100)
		require.NoError(t, err)
		require.Len(t, recs, int(want[p]))
		for i, r := range recs {
			require.Equal(t, uint64(i), r.Offset)
		}
		next, err := tp.NextOffset(p)
		require.NoError(t, err)
		require.Equal(t, want[p], next)
	}
}

// docs/phase-2-topics.md § The ordering guarantee: within a partition,
// records keep the order the partition accepted them in, offsets dense.
// Concurrent producers each send their own sequence under one key; each
// sequence must appear in order in its partition. Run with -race.
func TestTopicOrderingWithinPartitionUnderConcurrency(t *testing.T) {
	tp := openT(t, t.TempDir(), "conc", 4)
	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []byte(fmt.Sprintf("writer-%d", w))
			last := -1
			for i := range each {
				res, err := tp.Append(key, []byte(fmt.Sprintf("%d:%d", w, i)))
				if err != nil {
					t.Error(err)
					return
				}
				if int(res.Offset) <= last {
					t.Errorf("writer %d: offset %d after %d", w, res.Offset, last)
				}
				last = int(res.Offset)
			}
		}()
	}
	// keyless appends racing with the keyed ones
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := tp.Append(nil, []byte("rr:0")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()

	total := 0
	for p := range tp.PartitionCount() {
		recs, err := tp.Read(p, 0, 10_000)
		require.NoError(t, err)
		total += len(recs)
		next := map[string]int{}
		for i, r := range recs {
			require.Equal(t, uint64(i), r.Offset, "offsets dense")
			w, seq, _ := strings.Cut(string(r.Payload), ":")
			if w == "rr" {
				continue
			}
			var n int
			_, err := fmt.Sscan(seq, &n)
			require.NoError(t, err)
			require.Equal(t, next[w], n, "writer %s out of order in partition %d", w, p)
			next[w]++
		}
	}
	require.Equal(t, writers*each+2*each, total)
}

// Rule: a partition id outside 0..count-1 is refused.
func TestTopicPartitionOutOfRange(t *testing.T) {
	tp := openT(t, t.TempDir(), "range", 2)
	for _, p := range []int{-1, 2, 100} {
		_, err := tp.Read(p, 0, 1)
		require.ErrorIs(t, err, ErrPartitionOutOfRange)
		_, err = tp.NextOffset(p)
		require.ErrorIs(t, err, ErrPartitionOutOfRange)
	}
}

// docs/phase-2-topics.md § Names: partition counts are positive; nothing is
// created otherwise.
func TestTopicInvalidPartitionCount(t *testing.T) {
	root := t.TempDir()
	for _, n := range []int{0, -1, -100} {
		_, err := Open(root, "t", n)
		require.ErrorIs(t, err, ErrInvalidPartitionCount)
	}
	require.Empty(t, tree(t, root))
}

// Never panic on bad input: a huge partition count is refused before
// anything is allocated or created. (It used to size a slice from the
// count and kill the process with "out of memory".)
func TestTopicPartitionCountAboveMaximum(t *testing.T) {
	root := t.TempDir()
	for _, n := range []int{MaxPartitionCount + 1, 1 << 40, math.MaxInt} {
		_, err := Open(root, "t", n)
		require.ErrorIs(t, err, ErrInvalidPartitionCount, "count %d", n)
	}
	require.Empty(t, tree(t, root))
	require.Equal(t, "partition-999999", PartitionDir(MaxPartitionCount-1), "every id fits the six-digit layout")
}

// docs/design.md § Names: every unsafe name is refused before any file is
// touched; 249 characters are accepted.
func TestTopicInvalidNamesCreateNothing(t *testing.T) {
	names := []string{"", ".", "..", "a/b", "../x", "/abs", "a b", " ", "a\x00b", "tab\t", "é", "a\\b", strings.Repeat("a", 250)}
	for _, name := range names {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			parent := t.TempDir()
			root := filepath.Join(parent, "root")
			require.NoError(t, os.Mkdir(root, 0o755))
			_, err := Open(root, name, 1)
			require.ErrorIs(t, err, ErrInvalidName)
			require.ErrorIs(t, ValidateName(name), ErrInvalidName)
			_, err = OpenExisting(root, name, Options{})
			require.ErrorIs(t, err, ErrInvalidName)
			require.Equal(t, []string{"root/"}, tree(t, parent), "nothing created anywhere")
		})
	}
	long := strings.Repeat("a", 249)
	tp := openT(t, t.TempDir(), long, 1)
	require.Equal(t, long, tp.Name())
	for _, ok := range []string{"a", "A-z_0.9", "...", "-", "_"} {
		require.NoError(t, ValidateName(ok), ok)
	}
}

// Rule: Close closes every partition and is safe twice; later operations fail
// with log.ErrClosed.
func TestTopicCloseTwice(t *testing.T) {
	tp, err := Open(t.TempDir(), "c", 2)
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	require.NoError(t, tp.Close())
	_, err = tp.Append([]byte("k"), []byte("v"))
	require.ErrorIs(t, err, log.ErrClosed)
	_, err = tp.Read(0, 0, 1)
	require.ErrorIs(t, err, log.ErrClosed)
	_, err = tp.AppendBatch([]Message{{Payload: []byte("v")}})
	require.ErrorIs(t, err, log.ErrClosed)
}

// Rule: reopening finds the records; reads past the end are empty.
func TestTopicReopenKeepsRecords(t *testing.T) {
	root := t.TempDir()
	tp, err := Open(root, "keep", 2)
	require.NoError(t, err)
	res, err := tp.Append([]byte("user-123"), []byte("hello"))
	require.NoError(t, err)
	require.NoError(t, tp.Close())

	tp = openT(t, root, "keep", 2)
	recs, err := tp.Read(res.Partition, 0, 10)
	require.NoError(t, err)
	require.Equal(t, []log.Record{res.Record}, recs)
	recs, err = tp.Read(res.Partition, 5, 10)
	require.NoError(t, err)
	require.Empty(t, recs)
}

// docs/phase-2-topics.md § Reopening: a partition missing from an existing
// topic is reported, never silently recreated.
func TestTopicMissingPartitionReported(t *testing.T) {
	for _, what := range []string{"dir", "log"} {
		t.Run(what, func(t *testing.T) {
			root := t.TempDir()
			tp, err := Open(root, "gone", 3)
			require.NoError(t, err)
			require.NoError(t, tp.Close())
			victim := filepath.Join(root, "gone", PartitionDir(1))
			if what == "log" {
				victim = filepath.Join(victim, segment.SegmentFileName(0))
			}
			require.NoError(t, os.RemoveAll(victim))
			before := tree(t, root)

			_, err = Open(root, "gone", 3)
			require.ErrorIs(t, err, ErrMissingPartition)
			_, err = OpenExisting(root, "gone", Options{})
			require.ErrorIs(t, err, ErrMissingPartition)
			require.Equal(t, before, tree(t, root), "nothing recreated")
		})
	}
}

// Decision: a damaged partition log makes Open fail with the log's
// *CorruptionError, and nothing is repaired.
func TestTopicCorruptPartitionReported(t *testing.T) {
	root := t.TempDir()
	tp, err := Open(root, "bad", 2)
	require.NoError(t, err)
	_, err = tp.Append(nil, []byte("hello"))
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	path := filepath.Join(root, "bad", PartitionDir(0), segment.SegmentFileName(0))
	data := readFile(t, path)
	data[len(data)-1] ^= 0xff
	data[0] = 0x7f // record_length no longer agrees with payload_length
	require.NoError(t, os.WriteFile(path, data, 0o644))

	_, err = Open(root, "bad", 2)
	var ce *log.CorruptionError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, data, readFile(t, path))
}

// Decision: a directory without topic.meta is not a topic; creating the
// topic there refuses partition logs that already hold records rather than
// adopting them.
func TestTopicCreateRefusesOrphanRecords(t *testing.T) {
	root := t.TempDir()
	tp, err := Open(root, "orph", 2)
	require.NoError(t, err)
	_, err = tp.Append(nil, []byte("r"))
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	require.NoError(t, os.Remove(filepath.Join(root, "orph", MetadataFile)))
	before := tree(t, root)

	_, err = Open(root, "orph", 2)
	var me *MetadataError
	require.ErrorAs(t, err, &me)
	require.Equal(t, before, tree(t, root))
	_, err = OpenExisting(root, "orph", Options{})
	require.ErrorIs(t, err, ErrTopicNotFound)
}

// docs/phase-2-topics.md § Reopening: a leftover temp file of an interrupted
// metadata write is ignored and removed; topic.meta itself is untouched.
func TestTopicLeftoverTempRemoved(t *testing.T) {
	root := t.TempDir()
	tp, err := Open(root, "tmp", 2)
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	meta := filepath.Join(root, "tmp", MetadataFile)
	before := readFile(t, meta)
	require.NoError(t, os.WriteFile(meta+".tmp", []byte(`{"version": 1, "na`), 0o644))

	reopened := openT(t, root, "tmp", 2)
	require.Equal(t, 2, reopened.PartitionCount())
	require.NoFileExists(t, meta+".tmp")
	require.Equal(t, before, readFile(t, meta))
}

// OpenExisting reopens with the stored partition count and never creates.
func TestTopicOpenExisting(t *testing.T) {
	root := t.TempDir()
	_, err := OpenExisting(root, "nope", Options{})
	require.ErrorIs(t, err, ErrTopicNotFound)
	require.Empty(t, tree(t, root))

	tp, err := Open(root, "yes", 5)
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	tp, err = OpenExisting(root, "yes", Options{})
	require.NoError(t, err)
	require.Equal(t, 5, tp.PartitionCount())
	require.NoError(t, tp.Close())
}

// Payload size limits come from Options and apply to every partition.
func TestTopicOptionsMaxPayloadSize(t *testing.T) {
	tp, err := OpenWithOptions(t.TempDir(), "small", 2, Options{MaxPayloadSize: 4})
	require.NoError(t, err)
	defer tp.Close()
	_, err = tp.Append(nil, []byte("12345"))
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)
	_, err = tp.Append(nil, []byte("1234"))
	require.NoError(t, err)
}
