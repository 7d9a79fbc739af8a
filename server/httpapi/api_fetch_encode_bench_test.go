package httpapi

import (
	"io"
	"testing"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic/envelope"
)

// BenchmarkFetchEncoder measures the streamed fetch answer per record:
// plain values, keyed envelopes, and an idempotent producer's
// transactional records with a marker, whose identity the encoder adds.
// It should allocate nothing per record but a record's headers.
//
//	go test -run '^$' -bench BenchmarkFetchEncoder -benchmem ./httpapi/
func BenchmarkFetchEncoder(b *testing.B) {
	value := make([]byte, 100)
	for _, bc := range []struct {
		name    string
		payload []byte
	}{
		{"plain", value},
		{"keyed", envelope.Encode(envelope.Record{Key: []byte("user-123"), Value: value})},
		{"idempotent", envelope.Encode(envelope.Record{Key: []byte("user-123"), Value: value,
			HasProducer: true, Producer: envelope.Producer{ID: 1000, Epoch: 1, Sequence: 12345}})},
		{"transactional", envelope.Encode(envelope.Record{Key: []byte("user-123"), Value: value,
			HasProducer: true, Producer: envelope.Producer{ID: 1000, Epoch: 1, Sequence: 12345}, Transactional: true})},
		{"marker", cluster.MarkerPayload(1000, 1, true, 1)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			recs := make([]log.Record, 100)
			for i := range recs {
				recs[i] = log.Record{Offset: uint64(i), Timestamp: 1733131200123456789, Payload: bc.payload}
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(recs) * len(bc.payload)))
			for b.Loop() {
				enc := newFetchEncoder(io.Discard)
				enc.begin()
				for _, rec := range recs {
					enc.record(rec)
				}
				enc.end(uint64(len(recs)), fetchTail{hwm: 100, logEnd: 100})
			}
		})
	}
}
