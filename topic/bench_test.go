package topic

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pystream/pystream/log"
)

// BenchmarkRoutingKeyed measures PartitionForKey (SHA-256 plus reduction).
func BenchmarkRoutingKeyed(b *testing.B) {
	key := []byte("user-123456")
	b.ReportAllocs()
	for b.Loop() {
		PartitionForKey(key, 64)
	}
}

// BenchmarkRoutingKeyedBigInt is the same rule with math/big, for
// comparison with the allocation-free reduction.
func BenchmarkRoutingKeyedBigInt(b *testing.B) {
	key := []byte("user-123456")
	b.ReportAllocs()
	for b.Loop() {
		bigPartition(key, 64)
	}
}

var payload = make([]byte, 100)

// BenchmarkAppendBareLog is one durable append to a log, the baseline for
// the topic benchmarks below.
func BenchmarkAppendBareLog(b *testing.B) {
	l, err := log.Open(filepath.Join(b.TempDir(), "log.bin"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if _, err := l.Append(payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendTopicKeyed is one durable keyed append through a topic of
// one partition: the log append plus routing.
func BenchmarkAppendTopicKeyed(b *testing.B) {
	tp, err := Open(b.TempDir(), "bench", 1)
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Close()
	key := []byte("user-123")
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if _, err := tp.Append(key, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendTopicParallel is concurrent keyless appends spread over
// four partitions (each partition group-commits its own appenders).
func BenchmarkAppendTopicParallel(b *testing.B) {
	tp, err := Open(b.TempDir(), "bench", 4)
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Close()
	b.SetBytes(int64(len(payload)))
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := tp.Append(nil, payload); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAppendBatchTopic is batches of 64 keyless records over four
// partitions: four writes and four fsyncs per batch, run concurrently.
func BenchmarkAppendBatchTopic(b *testing.B) {
	tp, err := Open(b.TempDir(), "bench", 4)
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Close()
	msgs := make([]Message, 64)
	for i := range msgs {
		msgs[i] = Message{Key: []byte(fmt.Sprint(i)), Payload: payload}
	}
	b.SetBytes(int64(len(payload) * len(msgs)))
	for b.Loop() {
		if _, err := tp.AppendBatch(msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(msgs))/b.Elapsed().Seconds(), "records/s")
}
