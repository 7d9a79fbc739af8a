package kafka_test

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchRequest is a Fetch v12 of every partition in partitions of events
// from offset 0, each capped at partitionMax bytes.
func fetchRequest(maxWait, minBytes, maxBytes, partitionMax int32, partitions ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID = 12, -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWait, minBytes, maxBytes
	req.SessionEpoch = -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "events"
	for _, p := range partitions {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = p, 0, partitionMax
		ft.Partitions = append(ft.Partitions, fp)
	}
	req.Topics = []kmsg.FetchRequestTopic{ft}
	return req
}

// fetched is the number of records of each partition of a fetch answer.
func fetched(t *testing.T, resp *kmsg.FetchResponse) []int {
	t.Helper()
	var out []int
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			require.Zero(t, rp.ErrorCode, "partition %d", rp.Partition)
			n := 0
			for b := rp.RecordBatches; len(b) > 0; {
				var rb kmsg.RecordBatch
				require.NoError(t, rb.ReadFrom(b))
				n += int(rb.NumRecords)
				b = b[12+rb.Length:]
			}
			out = append(out, n)
		}
	}
	return out
}

// fill writes n records of a 1000-byte value to each of partitions.
func fill(t *testing.T, nc net.Conn, n int, partitions ...int32) {
	t.Helper()
	var values [][]byte
	for i := 0; i < n; i++ {
		values = append(values, bytes.Repeat([]byte{byte('a' + i)}, 1000))
	}
	for _, p := range partitions {
		req := produceRequest(9, batchOf(t, values...))
		req.Topics[0].Partitions[0].Partition = p
		resp := roundTrip(t, nc, req, 9).(*kmsg.ProduceResponse)
		require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
	}
}

// TestKafkaFetchMaxBytes pins a fetch's size bounds over two partitions
// of ten 1000-byte records each: partition_max_bytes stops each
// partition, max_bytes stops the answer, and the first record of the
// first partition with records is there however small the bounds — only
// that one record may pass them (KIP-74): a later partition's first
// record waits for the next fetch.
func TestKafkaFetchMaxBytes(t *testing.T) {
	f := start(t, 1, 2, 1)
	nc := f.dial(t, 1)
	fill(t, nc, 10, 0, 1)
	for _, c := range []struct {
		maxBytes, partitionMax int32
		want                   []int
	}{
		{maxBytes: 1 << 20, partitionMax: 1 << 20, want: []int{10, 10}},
		{maxBytes: 1 << 20, partitionMax: 3500, want: []int{3, 3}},
		{maxBytes: 1 << 20, partitionMax: 1, want: []int{1, 0}},
		{maxBytes: 3500, partitionMax: 1 << 20, want: []int{3, 0}},
		{maxBytes: 1, partitionMax: 1 << 20, want: []int{1, 0}},
		{maxBytes: 1, partitionMax: 1, want: []int{1, 0}},
	} {
		resp := roundTrip(t, nc, fetchRequest(0, 0, c.maxBytes, c.partitionMax, 0, 1), 12).(*kmsg.FetchResponse)
		require.Equal(t, c.want, fetched(t, resp), fmt.Sprintf("max_bytes %d, partition_max_bytes %d", c.maxBytes, c.partitionMax))
	}
}

// TestKafkaFetchMinBytesWaitsForProduce: a fetch of an empty partition
// with min_bytes 1 and a long max_wait is answered as soon as a produce
// on another connection writes a record, well before max_wait.
func TestKafkaFetchMinBytesWaitsForProduce(t *testing.T) {
	f := start(t, 1, 1, 1)
	type answer struct {
		resp    *kmsg.FetchResponse
		elapsed time.Duration
	}
	got := make(chan answer, 1)
	fetcher := f.dial(t, 1)
	go func() {
		start := time.Now()
		resp := roundTrip(t, fetcher, fetchRequest(10_000, 1, 1<<20, 1<<20, 0), 12).(*kmsg.FetchResponse)
		got <- answer{resp, time.Since(start)}
	}()
	const delay = 200 * time.Millisecond
	time.Sleep(delay)
	select {
	case a := <-got:
		t.Fatalf("answered after %v, before any record was produced: %v", a.elapsed, fetched(t, a.resp))
	default:
	}
	fill(t, f.dial(t, 1), 1, 0)
	select {
	case a := <-got:
		require.Equal(t, []int{1}, fetched(t, a.resp))
		require.GreaterOrEqual(t, a.elapsed, delay)
		require.Less(t, a.elapsed, 5*time.Second, "answered long before max_wait (10 s)")
	case <-time.After(5 * time.Second):
		t.Fatal("the fetch was not answered within 5 s of the produce")
	}
}

// TestKafkaFetchMaxWaitAnswersEmpty: a fetch whose min_bytes never come
// is answered empty, with no error, after about max_wait.
func TestKafkaFetchMaxWaitAnswersEmpty(t *testing.T) {
	f := start(t, 1, 1, 1)
	const maxWait = 300 * time.Millisecond
	start := time.Now()
	resp := roundTrip(t, f.dial(t, 1), fetchRequest(int32(maxWait/time.Millisecond), 1, 1<<20, 1<<20, 0), 12).(*kmsg.FetchResponse)
	elapsed := time.Since(start)
	require.Equal(t, []int{0}, fetched(t, resp))
	// An empty record set is sent as empty, not null: librdkafka (kcat)
	// refuses a null one as a protocol error.
	require.NotNil(t, resp.Topics[0].Partitions[0].RecordBatches, "records: empty, not null")
	require.GreaterOrEqual(t, elapsed, maxWait-10*time.Millisecond)
	require.Less(t, elapsed, 3*time.Second, "bounded by max_wait, not by a longer timer")
}
