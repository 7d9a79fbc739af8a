package kafka_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/kafka"
)

// zstdBatch is a zstd record batch of records records, each a value of
// size zero bytes: valid, and a decompression bomb (a few hundred bytes
// that inflate to records × size).
func zstdBatch(t *testing.T, records, size int) []byte {
	t.Helper()
	var raw []byte
	value := make([]byte, size)
	for i := range records {
		r := kmsg.Record{OffsetDelta: int32(i), Value: value}
		enc := r.AppendTo(nil)[1:]
		raw = binary.AppendVarint(raw, int64(len(enc)))
		raw = append(raw, enc...)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20))
	require.NoError(t, err)
	body := enc.EncodeAll(raw, nil)
	n := int32(records)
	rb := kmsg.RecordBatch{Length: int32(49 + len(body)), Magic: 2, Attributes: 4, LastOffsetDelta: n - 1,
		FirstTimestamp: 1_700_000_000_000, MaxTimestamp: 1_700_000_000_000, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: n, Records: body}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32c(b[21:]))
	return b
}

// heapAfterGC is the heap in use once garbage is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// totalAlloc is the bytes allocated since the process started.
func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// TestKafkaProduceZstdBomb: docs/security.md § Bounds — what one produce
// request's compressed batches inflate to is charged as it inflates, all
// batches together: many small batches (each far under the per-batch
// cap) adding up to 800 MiB, and one batch inflating to 200 MiB, stop at
// the request's budget (8 MiB: DecompressRatio × MaxRequestBytes) with
// MESSAGE_TOO_LARGE, allocating a few budgets' worth, not the bomb; the
// budget is given back and the listener serves the next produce.
func TestKafkaProduceZstdBomb(t *testing.T) {
	small := zstdBatch(t, 8, 512<<10) // 4 MiB
	var many []byte
	for range 200 {
		many = append(many, small...)
	}
	require.Less(t, len(many), kafka.DefaultMaxRequestBytes, "the bomb fits one request")
	one := zstdBatch(t, 400, 512<<10) // 200 MiB
	f := start(t, 1, 1, 1)
	nc := f.dial(t, 1)

	for _, bomb := range []struct {
		name    string
		records []byte
	}{{"200 batches of 4 MiB", many}, {"one batch of 200 MiB", one}} {
		heapBefore, allocBefore := heapAfterGC(), totalAlloc()
		resp := roundTrip(t, nc, produceRequest(9, bomb.records), 9).(*kmsg.ProduceResponse)
		alloc := totalAlloc() - allocBefore
		heapAfter := heapAfterGC()
		p := resp.Topics[0].Partitions[0]
		require.Equal(t, kerr.MessageTooLarge.Code, p.ErrorCode, "%s: %v", bomb.name, p.ErrorMessage)
		t.Logf("%s (%d bytes sent): allocated %d MiB while answering; heap in use %d MiB before, %d MiB after",
			bomb.name, len(bomb.records), alloc>>20, heapBefore>>20, heapAfter>>20)
		require.Less(t, alloc, uint64(64<<20), "%s: inflated no further than the budget", bomb.name)
	}
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Zero(t, hwm, "nothing written")

	resp := roundTrip(t, nc, produceRequest(9, batchOf(t, []byte("after the bombs"))), 9).(*kmsg.ProduceResponse)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode, "the listener still serves")
}

// TestKafkaProduceInflightBudget: decompressed records are reserved from
// the server-wide in-flight budget too: past it, POLICY_VIOLATION, and
// what the request took is given back (the next request is served).
func TestKafkaProduceInflightBudget(t *testing.T) {
	bomb := zstdBatch(t, 16, 512<<10)
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.MaxInflightBytes = 3 << 20; c.MaxDecompressedBytes = 64 << 20 })
	nc := f.dial(t, 1)
	for range 3 {
		resp := roundTrip(t, nc, produceRequest(9, bomb), 9).(*kmsg.ProduceResponse)
		require.Equal(t, kerr.PolicyViolation.Code, resp.Topics[0].Partitions[0].ErrorCode)
	}
	resp := roundTrip(t, nc, produceRequest(9, batchOf(t, []byte("served"))), 9).(*kmsg.ProduceResponse)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
}

// TestKafkaProduceRecordsCap: the records of a produce request are capped
// as over HTTP, by the one rule (bounds.DefaultMaxRequestRecords, 10,000):
// 10,001 records (in two batches) are MESSAGE_TOO_LARGE with nothing
// written; 10,000 are written.
func TestKafkaProduceRecordsCap(t *testing.T) {
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.MaxRequestBytes = 4 << 20 })
	nc := f.dial(t, 1)
	values := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(fmt.Sprint(i))
		}
		return out
	}
	limit := bounds.DefaultMaxRequestRecords
	over := append(batchOf(t, values(limit)...), batchOf(t, values(1)...)...)
	resp := roundTrip(t, nc, produceRequest(9, over), 9).(*kmsg.ProduceResponse)
	p := resp.Topics[0].Partitions[0]
	require.Equal(t, kerr.MessageTooLarge.Code, p.ErrorCode)
	require.NotNil(t, p.ErrorMessage)
	require.Contains(t, *p.ErrorMessage, "PYSTREAM_MAX_REQUEST_RECORDS")
	_, hwm, err := f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Zero(t, hwm)

	resp = roundTrip(t, nc, produceRequest(9, batchOf(t, values(limit)...)), 9).(*kmsg.ProduceResponse)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
	_, hwm, err = f.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(limit), hwm)
}
