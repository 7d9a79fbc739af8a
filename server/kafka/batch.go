package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/topic/envelope"
)

// crc32c is the Castagnoli table of a record batch's CRC.
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// batchHeaderLen is a record batch's bytes before its records: first
// offset (8), length (4), then the 49 bytes the length counts before the
// records.
const (
	batchHeaderLen   = 61
	batchLengthAfter = 49
)

// batchError is a produce's records that are not valid record batches:
// CORRUPT_MESSAGE, and nothing of the partition is written.
type batchError struct{ reason string }

func (e *batchError) Error() string { return "kafka: corrupt record batch: " + e.reason }

func corrupt(format string, args ...any) error {
	return &batchError{reason: fmt.Sprintf(format, args...)}
}

// decodeBatches validates every record batch of b (magic 2, lengths,
// CRC-32C, record count and offset deltas, each record whole) and returns
// their records as envelopes, in order. What compressed batches inflate to
// is charged to f as it is inflated: past f, errDecompressedTooLarge or
// errInflightFull. Nothing is returned unless every batch is valid.
func decodeBatches(b []byte, f *inflation) ([]envelope.Record, error) {
	var out []envelope.Record
	for len(b) > 0 {
		if len(b) < batchHeaderLen {
			return nil, corrupt("%d trailing bytes, less than a batch header", len(b))
		}
		length := int64(int32(binary.BigEndian.Uint32(b[8:])))
		if length < batchLengthAfter || length > int64(len(b)-12) {
			return nil, corrupt("batch length %d with %d bytes left", length, len(b)-12)
		}
		raw := b[:12+length]
		b = b[12+length:]
		if magic := raw[16]; magic != 2 {
			return nil, corrupt("magic %d, only 2 is accepted", magic)
		}
		if got, want := crc32.Checksum(raw[21:], crc32c), binary.BigEndian.Uint32(raw[17:]); got != want {
			return nil, corrupt("CRC-32C %08x, the batch says %08x", got, want)
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			return nil, corrupt("%v", err)
		}
		recs, err := decodeRecords(&rb, f)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	if len(out) == 0 {
		return nil, corrupt("no records")
	}
	return out, nil
}

// decodeRecords decodes one validated batch's records.
func decodeRecords(rb *kmsg.RecordBatch, f *inflation) ([]envelope.Record, error) {
	if rb.Attributes&0x20 != 0 {
		return nil, corrupt("control batch")
	}
	if rb.Attributes&0x10 != 0 {
		return nil, corrupt("transactional batch: transactions are not served")
	}
	idempotent := rb.ProducerID >= 0
	if idempotent && (rb.ProducerEpoch < 0 || rb.FirstSequence < 0) {
		return nil, corrupt("producer %d with epoch %d and first sequence %d", rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence)
	}
	if rb.NumRecords < 1 || rb.LastOffsetDelta != rb.NumRecords-1 {
		return nil, corrupt("%d records with last offset delta %d", rb.NumRecords, rb.LastOffsetDelta)
	}
	data, err := decompress(int(rb.Attributes&0x07), rb.Records, f)
	if errors.Is(err, errDecompressedTooLarge) || errors.Is(err, errInflightFull) || errors.Is(err, errWindowTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, corrupt("records do not decompress: %v", err)
	}
	// Every record takes at least 7 bytes: bound the count before
	// allocating for it.
	if int64(rb.NumRecords) > int64(len(data)/7)+1 {
		return nil, corrupt("%d records in %d bytes", rb.NumRecords, len(data))
	}
	out := make([]envelope.Record, 0, rb.NumRecords)
	for i := int32(0); i < rb.NumRecords; i++ {
		n, w := binary.Varint(data)
		if w <= 0 || n < 0 || n > int64(len(data)-w) {
			return nil, corrupt("record %d: length does not fit the batch", i)
		}
		var r kmsg.Record
		if err := r.ReadFrom(data[:w+int(n)]); err != nil {
			return nil, corrupt("record %d: %v", i, err)
		}
		data = data[w+int(n):]
		if r.OffsetDelta != i {
			return nil, corrupt("record %d has offset delta %d", i, r.OffsetDelta)
		}
		env := envelope.Record{Key: r.Key, Value: r.Value, Timestamp: rb.FirstTimestamp + r.TimestampDelta64, HasTimestamp: true}
		if idempotent {
			// Sequence numbers wrap past the largest int32, as Kafka's do.
			seq := envelope.SequenceAt(rb.FirstSequence, int64(i))
			env.Producer, env.HasProducer = envelope.Producer{ID: rb.ProducerID, Epoch: rb.ProducerEpoch, Sequence: seq}, true
		}
		for _, h := range r.Headers {
			env.Headers = append(env.Headers, envelope.Header{Key: h.Key, Value: h.Value})
		}
		out = append(out, env)
	}
	if len(data) != 0 {
		return nil, corrupt("%d bytes after the last record", len(data))
	}
	return out, nil
}

// batchRecordsAt is where a record batch's record count lies: after first
// offset, length, leader epoch, magic, CRC, attributes, last offset delta,
// two timestamps, producer id and epoch and first sequence.
const batchRecordsAt = 57

// countRecords is the records the batches of b say they hold, read from
// their headers without decoding them; it stops at the first header that
// does not fit (the decoder refuses it later).
func countRecords(b []byte) int64 {
	var n int64
	for len(b) >= batchHeaderLen {
		length := int64(int32(binary.BigEndian.Uint32(b[8:])))
		if length < batchLengthAfter || length > int64(len(b)-12) {
			break
		}
		n += max(int64(int32(binary.BigEndian.Uint32(b[batchRecordsAt:]))), 0)
		b = b[12+length:]
	}
	return n
}

// appendBatch appends recs (offsets first..) as one uncompressed record
// batch of CreateTime timestamps.
func appendBatch(dst []byte, first int64, recs []envelope.Record, epoch int32) []byte {
	if len(recs) == 0 {
		return dst
	}
	firstTs, maxTs := recs[0].Timestamp, recs[0].Timestamp
	var body []byte
	for i, e := range recs {
		maxTs = max(maxTs, e.Timestamp)
		r := kmsg.Record{TimestampDelta64: e.Timestamp - firstTs, OffsetDelta: int32(i), Key: e.Key, Value: e.Value}
		for _, h := range e.Headers {
			r.Headers = append(r.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		// The record's length prefix counts what follows it: encode
		// with a zero length (one byte) and put the real one in front.
		enc := r.AppendTo(nil)[1:]
		body = binary.AppendVarint(body, int64(len(enc)))
		body = append(body, enc...)
	}
	rb := kmsg.RecordBatch{
		FirstOffset:          first,
		Length:               int32(batchLengthAfter + len(body)),
		PartitionLeaderEpoch: epoch,
		Magic:                2,
		LastOffsetDelta:      int32(len(recs) - 1),
		FirstTimestamp:       firstTs,
		MaxTimestamp:         maxTs,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(recs)),
		Records:              body,
	}
	start := len(dst)
	dst = rb.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start+17:], crc32.Checksum(dst[start+21:], crc32c))
	return dst
}
