package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/stretchr/testify/require"
)

// memTopic is one topic in memory, served as consume asks: every fetch
// returns at most perFetch records (a server's cap, small here so that
// rounds show), and commits are kept per partition and counted.
type memTopic struct {
	name       string
	partitions [][]string
	perFetch   int
	committed  map[int]uint64
	commits    int
	fetches    []int // the partition of each fetch, in order
	// start is every partition's log start: a fetch below it is the
	// server's 416.
	start uint64
}

var _ consumeAPI = (*memTopic)(nil)

func (m *memTopic) Topic(_ context.Context, name string) (*apiclient.TopicDetail, error) {
	if name != m.name {
		return nil, &apiclient.Error{Status: 404, Code: apiclient.CodeNotFound, Message: "unknown topic"}
	}
	td := &apiclient.TopicDetail{Name: name, PartitionCount: len(m.partitions)}
	// Listed backwards: consume must visit partitions in ascending order
	// whatever order the server lists them in.
	for p := len(m.partitions) - 1; p >= 0; p-- {
		td.Partitions = append(td.Partitions, apiclient.PartitionStatus{Partition: p, HighWatermark: uint64(len(m.partitions[p]))})
	}
	return td, nil
}

func (m *memTopic) Fetch(_ context.Context, _ string, p int, offset uint64, max int) (*apiclient.FetchResponse, error) {
	if p >= len(m.partitions) {
		return nil, &apiclient.Error{Status: 404, Code: apiclient.CodeNotFound, Message: "unknown partition"}
	}
	m.fetches = append(m.fetches, p)
	recs := m.partitions[p]
	if offset < m.start && offset < uint64(len(recs)) {
		ls, hw := m.start, uint64(len(recs))
		return nil, &apiclient.OffsetOutOfRangeError{Topic: m.name, Partition: p, Offset: offset, LogStart: ls, HighWatermark: hw,
			Err: &apiclient.Error{Status: 416, Code: apiclient.CodeOffsetOutOfRange, Message: "below the log start", LogStart: &ls, HighWatermark: &hw}}
	}
	res := &apiclient.FetchResponse{NextOffset: offset, HighWatermark: uint64(len(recs)), LogEnd: uint64(len(recs))}
	for o := offset; o < uint64(len(recs)) && len(res.Records) < min(max, m.perFetch); o++ {
		r := apiclient.FetchedRecord{Offset: o, Timestamp: int64(o) * 1e6, Value: []byte(recs[o])}
		if marker, ok := strings.CutPrefix(recs[o], "marker:"); ok {
			r.Value, r.Marker = nil, marker // a transaction's marker
		}
		res.Records = append(res.Records, r)
		res.NextOffset = o + 1
	}
	return res, nil
}

func (m *memTopic) ConsumerOffset(_ context.Context, id, topic string, p int) (*apiclient.ConsumerOffsetResponse, error) {
	res := &apiclient.ConsumerOffsetResponse{ConsumerID: id, Topic: topic, Partition: p}
	if off, ok := m.committed[p]; ok {
		res.Offset = &off
	}
	return res, nil
}

func (m *memTopic) CommitOffset(_ context.Context, id, topic string, p int, offset uint64) (*apiclient.ConsumerOffsetResponse, error) {
	if m.committed == nil {
		m.committed = map[int]uint64{}
	}
	m.committed[p] = offset
	m.commits++
	return &apiclient.ConsumerOffsetResponse{ConsumerID: id, Topic: topic, Partition: p, Offset: &offset}, nil
}

// orders is a topic of three partitions holding 3, 0 and 2 records.
func orders() *memTopic {
	return &memTopic{name: "orders", perFetch: 2, partitions: [][]string{{"a0", "a1", "a2"}, {}, {"c0", "c1"}}}
}

// runConsume runs consume with o (format "%p@%o %v\n" unless set) against m
// and returns stdout and stderr.
func runConsume(t *testing.T, m *memTopic, o consumeOptions) (string, string) {
	t.Helper()
	if o.topic == "" {
		o.topic = m.name
	}
	if o.format == nil {
		var err error
		o.format, err = compileFormat(`%p@%o %v\n`)
		require.NoError(t, err)
	}
	var stdout, stderr bytes.Buffer
	a := &app{env: Env{Stdout: &stdout, Stderr: &stderr}}
	require.NoError(t, a.consume(context.Background(), func() {}, m, o))
	return stdout.String(), stderr.String()
}

// TestCLIConsumeAllPartitions: without -p consume reads every partition,
// one fetch each in turn (kcat's interleaving), in ascending partition
// order, and -e ends once every partition is at its high watermark.
func TestCLIConsumeAllPartitions(t *testing.T) {
	m := orders()
	out, _ := runConsume(t, m, consumeOptions{all: true, exitAtEnd: true})
	require.Equal(t, "0@0 a0\n0@1 a1\n2@0 c0\n2@1 c1\n0@2 a2\n", out)
	// Round 1: 0, 1, 2; round 2: 0 (1 and 2 are at their end).
	require.Equal(t, []int{0, 1, 2, 0}, m.fetches)

	// -p still reads one partition.
	out, _ = runConsume(t, orders(), consumeOptions{partition: 2, exitAtEnd: true})
	require.Equal(t, "2@0 c0\n2@1 c1\n", out)

	// -n counts over every partition.
	out, _ = runConsume(t, orders(), consumeOptions{all: true, exitAtEnd: true, limit: 3})
	require.Equal(t, "0@0 a0\n0@1 a1\n2@0 c0\n", out)

	// -o applies to every partition: -1 is each one's last record.
	out, _ = runConsume(t, orders(), consumeOptions{all: true, exitAtEnd: true, offset: "-1"})
	require.Equal(t, "0@2 a2\n2@1 c1\n", out)
	out, _ = runConsume(t, orders(), consumeOptions{all: true, exitAtEnd: true, offset: "end"})
	require.Empty(t, out)
}

// TestCLIConsumeSkipsMarkers: a transaction's markers are records of the
// log, not of the application: consume skips them, as Kafka's consumers
// skip control records, and commits past them.
func TestCLIConsumeSkipsMarkers(t *testing.T) {
	m := &memTopic{name: "orders", perFetch: 2, partitions: [][]string{{"a0", "marker:commit", "a1", "marker:abort"}}}
	out, _ := runConsume(t, m, consumeOptions{partition: 0, exitAtEnd: true, commitAs: "billing"})
	require.Equal(t, "0@0 a0\n0@2 a1\n", out)
	require.Equal(t, uint64(4), m.committed[0], "committed past the last marker")
	out, _ = runConsume(t, m, consumeOptions{partition: 0, exitAtEnd: true, limit: 1, offset: "1"})
	require.Equal(t, "0@2 a1\n", out, "-n counts records, not markers")
}

// TestCLIConsumeCommitPerPartition: --commit-as without -p commits each
// partition's own position, starts each from its own committed offset,
// and says which partition a replay below the committed offset is in.
func TestCLIConsumeCommitPerPartition(t *testing.T) {
	m := orders()
	out, _ := runConsume(t, m, consumeOptions{all: true, exitAtEnd: true, limit: 3, commitAs: "billing"})
	require.Equal(t, "0@0 a0\n0@1 a1\n2@0 c0\n", out)
	require.Equal(t, map[int]uint64{0: 2, 2: 1}, m.committed, "partition 1 had nothing to commit")

	m.fetches = nil
	out, _ = runConsume(t, m, consumeOptions{all: true, exitAtEnd: true, commitAs: "billing"})
	require.Equal(t, "0@2 a2\n2@1 c1\n", out, "each partition resumes at its own committed offset")
	require.Equal(t, map[int]uint64{0: 3, 2: 2}, m.committed)

	commits := m.commits
	out, errOut := runConsume(t, m, consumeOptions{all: true, exitAtEnd: true, offset: "start", commitAs: "billing"})
	require.Equal(t, "0@0 a0\n0@1 a1\n2@0 c0\n2@1 c1\n0@2 a2\n", out)
	require.Equal(t, commits, m.commits, "a replay commits nothing")
	require.Contains(t, errOut, "note: orders/0: position 2 is below the committed offset 3 of billing")
	require.NotContains(t, errOut, "orders/2", "its first fetch reached the committed offset")
}

// TestCLIConsumeUnknown: an unknown topic or partition is the server's
// error, naming what was asked.
func TestCLIConsumeUnknown(t *testing.T) {
	var stdout bytes.Buffer
	a := &app{env: Env{Stdout: &stdout, Stderr: &stdout}}
	err := a.consume(context.Background(), func() {}, orders(), consumeOptions{topic: "nope", all: true, exitAtEnd: true})
	require.ErrorIs(t, err, apiclient.ErrNotFound)
	require.True(t, strings.HasPrefix(err.Error(), "consume nope: "), err.Error())
	err = a.consume(context.Background(), func() {}, orders(), consumeOptions{topic: "orders", partition: 5, exitAtEnd: true})
	require.ErrorIs(t, err, apiclient.ErrNotFound)
	require.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("consume orders/%d at offset 0: ", 5)), err.Error())
}

// TestCLIConsumeOffsetReset: a fetch below the log start (416) resumes at
// the log start (earliest, the default), at the high watermark (latest),
// or stops with an error naming both (none); every reset is a note on
// stderr saying how many records retention deleted.
func TestCLIConsumeOffsetReset(t *testing.T) {
	deleted := func() *memTopic {
		m := &memTopic{name: "orders", perFetch: 10, partitions: [][]string{{"a0", "a1", "a2", "a3", "a4"}}, start: 3}
		return m
	}
	for _, reset := range []string{"", "earliest"} {
		m := deleted()
		out, errOut := runConsume(t, m, consumeOptions{partition: 0, exitAtEnd: true, reset: reset, commitAs: "billing"})
		require.Equal(t, "0@3 a3\n0@4 a4\n", out, reset)
		require.Contains(t, errOut, "note: orders/0: offset 0 is below the log start 3 (3 record(s) deleted by retention); resuming at 3 (--offset-reset earliest)")
		require.Equal(t, map[int]uint64{0: 5}, m.committed)
	}

	m := deleted()
	out, errOut := runConsume(t, m, consumeOptions{partition: 0, exitAtEnd: true, reset: "latest", offset: "1"})
	require.Empty(t, out)
	require.Contains(t, errOut, "offset 1 is below the log start 3 (2 record(s) deleted by retention); resuming at 5 (--offset-reset latest)")

	var stdout, stderr bytes.Buffer
	a := &app{env: Env{Stdout: &stdout, Stderr: &stderr}}
	err := a.consume(context.Background(), func() {}, deleted(), consumeOptions{topic: "orders", partition: 0, exitAtEnd: true, reset: "none"})
	var oor *OffsetOutOfRangeError
	require.ErrorAs(t, err, &oor)
	require.Equal(t, OffsetOutOfRangeError{Where: "orders/0", Offset: 0, LogStart: 3, HighWatermark: 5, Err: oor.Err}, *oor)
	require.ErrorIs(t, err, apiclient.ErrOffsetOutOfRange)
	require.Equal(t, ExitFailure, ExitCode(err))
	require.Contains(t, err.Error(), "offset 0 is below the log start 3 (high watermark 5)")
	require.Empty(t, stdout.String())
}
