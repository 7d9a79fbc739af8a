package envelope

import (
	"bytes"
	"testing"
)

// benchPayload is a typical Kafka record: a key, one header, a create
// time, a producer identity and a 100-byte value.
var benchPayload = Encode(Record{
	Key:          []byte("user-123"),
	Headers:      []Header{{"trace", []byte("abc")}},
	Timestamp:    1700000000000,
	HasTimestamp: true,
	Producer:     Producer{ID: 1000, Epoch: 1, Sequence: 4242},
	HasProducer:  true,
	Value:        bytes.Repeat([]byte("v"), 100),
})

// BenchmarkEnvelopeProducerOf is the per-record cost of rebuilding a
// partition's producer state from its log.
func BenchmarkEnvelopeProducerOf(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ProducerOf(benchPayload); !ok {
			b.Fatal("no producer")
		}
	}
}

// BenchmarkEnvelopeDecode is the same record decoded whole, for comparison.
func BenchmarkEnvelopeDecode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if r := Decode(benchPayload); !r.HasProducer {
			b.Fatal("no producer")
		}
	}
}
