package topic

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// TestCrashSimTopicKeepsAcknowledgedRecords pins the topic half of
// docs/design.md § Invariants, 1 and 2 under a simulated power loss: after a
// topic is created (directories, logs, topic.meta) and records are appended and
// acknowledged, a crash leaves a topic that Open accepts with every
// acknowledged record in its partition at its offset.
func TestCrashSimTopicKeepsAcknowledgedRecords(t *testing.T) {
	const partitions, records = 3, 12
	root := t.TempDir()
	c, err := logtest.NewCrashFS(root)
	require.NoError(t, err)
	dataRoot := filepath.Join(root, "data")
	tp, err := OpenWithOptions(dataRoot, "orders", partitions, Options{FS: c})
	require.NoError(t, err)
	defer tp.Close()
	want := make([][]log.Record, partitions)
	for i := range records {
		res, err := tp.Append([]byte(fmt.Sprintf("key-%d", i)), []byte(fmt.Sprintf("order %d", i)))
		require.NoError(t, err)
		require.Equal(t, uint64(len(want[res.Partition])), res.Offset)
		want[res.Partition] = append(want[res.Partition], res.Record)
	}

	dst := filepath.Join(t.TempDir(), "crashed")
	require.NoError(t, c.Crash(dst))
	crashed, err := Open(filepath.Join(dst, "data"), "orders", partitions)
	require.NoError(t, err, "the crashed topic opens: metadata and every partition survived")
	defer crashed.Close()
	for p := range partitions {
		next, err := crashed.NextOffset(p)
		require.NoError(t, err)
		require.Equal(t, uint64(len(want[p])), next, "partition %d", p)
		got, err := crashed.Read(p, 0, records+1)
		require.NoError(t, err)
		if len(want[p]) == 0 {
			require.Empty(t, got)
			continue
		}
		require.Equal(t, want[p], got, "partition %d", p)
	}
}

// TestCrashSimTopicCreateIsAllOrNothing: a crash right after a topic is
// created leaves a topic that opens with the same partition count; the
// creation is not half-durable.
func TestCrashSimTopicCreateIsAllOrNothing(t *testing.T) {
	root := t.TempDir()
	c, err := logtest.NewCrashFS(root)
	require.NoError(t, err)
	tp, err := OpenWithOptions(root, "events", 2, Options{FS: c})
	require.NoError(t, err)
	defer tp.Close()
	dst := filepath.Join(t.TempDir(), "crashed")
	require.NoError(t, c.Crash(dst))
	crashed, err := OpenExisting(dst, "events", Options{})
	require.NoError(t, err)
	defer crashed.Close()
	require.Equal(t, 2, crashed.PartitionCount())
}

// TestCrashSimTopicCreateAtEveryStep crashes a topic creation before each of
// its file-system operations in turn (docs/design.md § Invariants, 2: "a crash
// at any point of creation leaves either no topic or a complete one"). Every
// crashed copy must open with Open, the same partition count, and no records.
func TestCrashSimTopicCreateAtEveryStep(t *testing.T) {
	const partitions = 2
	counter := logtest.NewFaultFS(nil)
	// The same layout as below, so the same steps: data/ is new too.
	tp, err := OpenWithOptions(filepath.Join(t.TempDir(), "data"), "events", partitions, Options{FS: counter})
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	steps := counter.Total()
	require.Positive(t, steps)

	for n := 1; n <= steps; n++ {
		t.Run(fmt.Sprint("before step ", n), func(t *testing.T) {
			root := t.TempDir()
			c, err := logtest.NewCrashFS(root)
			require.NoError(t, err)
			dst := filepath.Join(t.TempDir(), "crashed")
			seen := 0
			ffs := logtest.NewFaultFS(c)
			ffs.SetFault(func(logtest.Op, string) error {
				seen++
				if seen == n {
					require.NoError(t, c.Crash(dst))
				}
				return nil
			})
			tp, err := OpenWithOptions(filepath.Join(root, "data"), "events", partitions, Options{FS: ffs})
			require.NoError(t, err)
			require.NoError(t, tp.Close())
			require.Equal(t, steps, seen, "the run takes the steps counted")
			require.DirExists(t, dst, "the crash happened")

			crashed, err := Open(filepath.Join(dst, "data"), "events", partitions)
			require.NoError(t, err, "crash before step %d", n)
			defer crashed.Close()
			for p := range partitions {
				next, err := crashed.NextOffset(p)
				require.NoError(t, err)
				require.Zero(t, next)
			}
		})
	}
}

// TestCrashSimTopicRestartAfterProcessCrash kills a topic's first life
// (creation, then one append) before each of its file-system operations in
// turn, the way a process dies: what it wrote stays in the page cache. A
// second life opens the topic and appends to every partition; then the power
// fails. The crashed copy must be a topic (OpenExisting finds it) holding
// every record the second life acknowledged.
func TestCrashSimTopicRestartAfterProcessCrash(t *testing.T) {
	const partitions = 2
	firstLife := func(fsys durable.FS, root string) {
		tp, err := OpenWithOptions(root, "events", partitions, Options{FS: fsys})
		if err != nil {
			return
		}
		_, _ = tp.Append(nil, []byte("first"))
		_ = tp.Close() // the process is dead; whatever Close reports is moot
	}
	counter := logtest.NewFaultFS(nil)
	firstLife(counter, filepath.Join(t.TempDir(), "data"))
	steps := counter.Total()
	require.Greater(t, steps, 10)

	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprint("dies before step ", n), func(t *testing.T) {
			root := t.TempDir()
			data := filepath.Join(root, "data")
			c, err := logtest.KillBefore(root, n, func(fsys durable.FS) { firstLife(fsys, data) })
			require.NoError(t, err)

			// The first life appends only once topic.meta is in place, so
			// the second always finds a topic or the makings of an empty one.
			tp, err := OpenWithOptions(data, "events", partitions, Options{FS: c})
			require.NoError(t, err, "the second life opens what the first left")
			// Nil keys go round-robin: one record to each partition.
			acked := map[int]log.Record{}
			for i := range partitions {
				res, err := tp.Append(nil, fmt.Appendf(nil, "second %d", i))
				require.NoError(t, err)
				acked[res.Partition] = res.Record
			}
			require.Len(t, acked, partitions)
			require.NoError(t, tp.Close())

			dst := filepath.Join(t.TempDir(), "crashed")
			require.NoError(t, c.Crash(dst))
			crashed, err := OpenExisting(filepath.Join(dst, "data"), "events", Options{})
			require.NoError(t, err, "the crashed copy is still a topic")
			defer crashed.Close()
			for p, want := range acked {
				recs, err := crashed.Read(p, want.Offset, 2)
				require.NoError(t, err)
				require.Equal(t, []log.Record{want}, recs, "partition %d keeps the acknowledged record, last", p)
			}
		})
	}
}
