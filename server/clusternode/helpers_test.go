package clusternode_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/topic"
)

// The fixtures of the tests of cluster mode: nodes on clustertest's
// in-memory Raft and internal network, each test inside a synctest
// bubble, waiting with Cluster.Await on conditions and advancing the fake
// clock with time.Sleep where a test means to let time pass.

// start is clustertest.Start.
func start(t *testing.T, size int, opts clustertest.Options) *clustertest.Cluster {
	t.Helper()
	return clustertest.Start(t, size, opts)
}

// msgs are messages with payloads and no key.
func msgs(payloads ...string) []topic.Message {
	out := make([]topic.Message, len(payloads))
	for i, p := range payloads {
		out[i] = topic.Message{Payload: []byte(p)}
	}
	return out
}

// send writes payloads to topicName/partition through node via, one
// batch, and returns the records as acknowledged: offset, timestamp,
// payload.
func send(t *testing.T, c *clustertest.Cluster, via int, topicName string, partition int, payloads ...string) ([]log.Record, []cluster.SendResult) {
	t.Helper()
	res, err := cluster.NewProducer(c.Via(via), topicName).SendBatchTo(partition, msgs(payloads...))
	require.NoError(t, err, "send %v to %s/%d through node %d", payloads, topicName, partition, via)
	recs := make([]log.Record, len(res))
	for i, r := range res {
		recs[i] = log.Record{Offset: r.Offset, Timestamp: r.Timestamp, Payload: []byte(payloads[i])}
	}
	return recs, res
}

// replicaRecords reads node id's own replica log of a partition from its
// files, without opening it.
func replicaRecords(t *testing.T, c *clustertest.Cluster, id int, topicName string, partition int) []log.Record {
	t.Helper()
	var out []log.Record
	dir := cluster.ReplicaDir(c.Dir(id), id, topicName, partition)
	require.NoError(t, segment.ScanDir(dir, log.Options{}, func(_ segment.SegmentInfo, _ int64, rec log.Record) error {
		out = append(out, rec)
		return nil
	}), "scan %s", dir)
	return out
}

// segmentFiles lists the segment files of node id's replica of a
// partition.
func segmentFiles(t *testing.T, c *clustertest.Cluster, id int, topicName string, partition int) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cluster.ReplicaDir(c.Dir(id), id, topicName, partition), "*.log"))
	require.NoError(t, err)
	return files
}

// replicaLogStart is the log start of node id's replica of a partition,
// from its files: the persisted start, or its first segment's base.
func replicaLogStart(t *testing.T, c *clustertest.Cluster, id int, topicName string, partition int) uint64 {
	t.Helper()
	dir := cluster.ReplicaDir(c.Dir(id), id, topicName, partition)
	start, _, err := segment.ReadLogStart(nil, dir)
	require.NoError(t, err)
	files := segmentFiles(t, c, id, topicName, partition)
	require.NotEmpty(t, files, "%s holds no segment", dir)
	slices.Sort(files)
	base, ok := segment.ParseSegmentFileName(filepath.Base(files[0]))
	require.True(t, ok, files[0])
	return max(start, base)
}

// quarantineFiles lists the quarantine files beside node id's replica of
// a partition.
func quarantineFiles(t *testing.T, c *clustertest.Cluster, id int, topicName string, partition int) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cluster.ReplicaDir(c.Dir(id), id, topicName, partition), "quarantine-*"))
	require.NoError(t, err)
	return files
}

// readAll reads a partition's committed records through node via.
func readAll(t *testing.T, c *clustertest.Cluster, via int, topicName string, partition int) []log.Record {
	t.Helper()
	return readFrom(t, c, via, topicName, partition, 0)
}

// readFrom reads a partition's committed records from offset from
// through node via.
func readFrom(t *testing.T, c *clustertest.Cluster, via int, topicName string, partition int, from uint64) []log.Record {
	t.Helper()
	var out []log.Record
	for at := from; ; {
		recs, err := c.Via(via).ReadCommitted(topicName, partition, at, 100)
		require.NoError(t, err, "read %s/%d from %d through node %d", topicName, partition, at, via)
		if len(recs) == 0 {
			return out
		}
		out = append(out, recs...)
		at = recs[len(recs)-1].Offset + 1
		require.Less(t, len(out), 100000, "a read that does not end")
	}
}

// sameRecords asserts two runs of records equal: offsets, timestamps and
// payloads.
func sameRecords(t *testing.T, want, got []log.Record, msgAndArgs ...any) {
	t.Helper()
	eq := slices.EqualFunc(want, got, func(a, b log.Record) bool {
		return a.Offset == b.Offset && a.Timestamp == b.Timestamp && string(a.Payload) == string(b.Payload)
	})
	if !eq {
		require.Fail(t, fmt.Sprintf("records differ:\nwant %v\n got %v", describe(want), describe(got)), msgAndArgs...)
	}
}

func describe(recs []log.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d@%d:%q", r.Offset, r.Timestamp, r.Payload)
	}
	return out
}

// payloadsOf are the records' payloads, as strings.
func payloadsOf(recs []log.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
	}
	return out
}

// others are the ids of c's nodes other than the ones given, ascending.
func others(c *clustertest.Cluster, not ...int) []int {
	return slices.DeleteFunc(c.IDs(), func(id int) bool { return slices.Contains(not, id) })
}

// statusVia is a partition's status through node via.
func statusVia(t *testing.T, c *clustertest.Cluster, via int, topicName string, partition int) cluster.PartitionStatus {
	t.Helper()
	st, err := c.Via(via).Status(topicName, partition)
	require.NoError(t, err, "status of %s/%d through node %d", topicName, partition, via)
	return st
}

// ledBy returns a partition of topicName, among its first partitions,
// that broker id leads as node via's metadata has it.
func ledBy(t *testing.T, c *clustertest.Cluster, via int, topicName string, partitions, id int) int {
	t.Helper()
	for p := range partitions {
		if statusVia(t, c, via, topicName, p).Leader == id {
			return p
		}
	}
	t.Fatalf("no partition of %s led by broker %d", topicName, id)
	return -1
}

// awaitEvery waits until cond holds of a partition's status through every
// node of ids.
func awaitEvery(c *clustertest.Cluster, what string, ids []int, topicName string, partition int, cond func(st cluster.PartitionStatus) error) {
	c.Await(what, func() (bool, string) {
		for _, id := range ids {
			st, err := c.Via(id).Status(topicName, partition)
			if err == nil {
				err = cond(st)
			}
			if err != nil {
				return false, fmt.Sprintf("through node %d: %v", id, err)
			}
		}
		return true, ""
	})
}

// settled is the condition of a partition whose every assigned replica is
// active, available and at the high watermark, lag 0.
func settled(st cluster.PartitionStatus) error {
	if !slices.Equal(st.Active, st.Assigned) {
		return fmt.Errorf("active %v of %v", st.Active, st.Assigned)
	}
	for _, r := range st.Replicas {
		if !r.Available || r.LogEnd == nil || r.Lag == nil || *r.Lag != 0 || *r.LogEnd != st.HighWatermark {
			return fmt.Errorf("replica %+v, high watermark %d", r, st.HighWatermark)
		}
	}
	return nil
}

// journal is every journal entry as node via has it.
func journal(t *testing.T, c *clustertest.Cluster, via int) []cluster.JournalEntry {
	t.Helper()
	entries, err := c.Via(via).Journal(0, 1<<20)
	require.NoError(t, err)
	return entries
}
