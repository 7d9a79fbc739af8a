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

// A record batch's attribute bits past the codec (bits 0-2): bit 3 says
// its timestamp is the broker's append time (LogAppendTime), bit 4 marks
// a transaction's batch, bit 5 a control batch (a transaction's marker).
const (
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
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
	if rb.Attributes&attrControl != 0 {
		// A transaction's markers are the coordinator's to write.
		return nil, corrupt("control batch")
	}
	idempotent := rb.ProducerID >= 0
	if idempotent && (rb.ProducerEpoch < 0 || rb.FirstSequence < 0) {
		return nil, corrupt("producer %d with epoch %d and first sequence %d", rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence)
	}
	transactional := rb.Attributes&attrTransactional != 0
	if transactional && !idempotent {
		return nil, corrupt("transactional batch without a producer id")
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
			env.Transactional = transactional
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

// largestBatch is the size of the largest record batch of b as sent (its
// offset and length fields included, compressed when it is), read from
// the batches' headers: what Kafka compares with max.message.bytes. It
// stops at the first header that does not fit (the decoder refuses it).
func largestBatch(b []byte) int64 {
	var largest int64
	for len(b) >= batchHeaderLen {
		length := int64(int32(binary.BigEndian.Uint32(b[8:])))
		if length < batchLengthAfter || length > int64(len(b)-12) {
			break
		}
		largest = max(largest, 12+length)
		b = b[12+length:]
	}
	return largest
}

// kafkaRecord is a stored record as a fetch sends it: its offset and its
// envelope, whose timestamp is the append time when logAppend (its
// topic's message.timestamp.type is LogAppendTime).
type kafkaRecord struct {
	offset    int64
	env       envelope.Record
	logAppend bool
}

// appendBatches appends recs as uncompressed record batches, one per run
// of consecutive records of one identity: no producer (producer id, epoch
// and base sequence -1), or one producer id and epoch, transactional or
// not, with consecutive sequences. Their timestamps are CreateTime, or
// LogAppendTime for records of logAppend, whose batch holds records of
// one append time only (a client takes the batch's MaxTimestamp as each
// record's). A transaction's marker is a control batch of its own
// (appendMarker).
func appendBatches(dst []byte, recs []kafkaRecord, epoch int32) []byte {
	for len(recs) > 0 {
		n := 1
		for n < len(recs) && sameBatch(recs[0], recs[n], n) {
			n++
		}
		if recs[0].env.Marker != envelope.NoMarker {
			dst = appendMarker(dst, recs[0], epoch)
		} else {
			dst = appendBatch(dst, recs[:n], epoch)
		}
		recs = recs[n:]
	}
	return dst
}

// sameBatch reports whether r, the i-th record from first, belongs in
// first's batch.
func sameBatch(first, r kafkaRecord, i int) bool {
	a, b := first.env, r.env
	switch {
	case r.offset != first.offset+int64(i), a.Marker != envelope.NoMarker, b.Marker != envelope.NoMarker,
		a.HasProducer != b.HasProducer, first.logAppend != r.logAppend, first.logAppend && a.Timestamp != b.Timestamp:
		return false
	case !a.HasProducer:
		return true
	}
	return a.Producer.ID == b.Producer.ID && a.Producer.Epoch == b.Producer.Epoch && a.Transactional == b.Transactional &&
		b.Producer.Sequence == envelope.SequenceAt(a.Producer.Sequence, int64(i))
}

// appendBatch appends recs, records of one identity (sameBatch), as one
// batch.
func appendBatch(dst []byte, recs []kafkaRecord, epoch int32) []byte {
	var body []byte
	for i, r := range recs {
		e := r.env
		kr := kmsg.Record{TimestampDelta64: e.Timestamp - recs[0].env.Timestamp, OffsetDelta: int32(i), Key: e.Key, Value: e.Value}
		for _, h := range e.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		body = appendRecord(body, kr)
	}
	rb := newBatch(recs, body, epoch)
	if recs[0].logAppend {
		rb.Attributes |= attrLogAppendTime
	}
	if e := recs[0].env; e.HasProducer {
		rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence = e.Producer.ID, e.Producer.Epoch, e.Producer.Sequence
		if e.Transactional {
			rb.Attributes |= attrTransactional
		}
	}
	return appendRecordBatch(dst, rb)
}

// appendMarker appends a transaction's marker as Kafka's control batch
// (attributes transactional and control) of one control record: its key
// the control record's version 0 and type (0 abort, 1 commit), its value
// the end transaction marker's version 0 and coordinator epoch (0: the
// coordinator is fenced by the producer's epoch alone).
func appendMarker(dst []byte, r kafkaRecord, epoch int32) []byte {
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(r.env.Marker.ControlType()))
	value := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 0)
	body := appendRecord(nil, kmsg.Record{Key: key, Value: value})
	rb := newBatch([]kafkaRecord{r}, body, epoch)
	rb.Attributes = attrTransactional | attrControl
	rb.ProducerID, rb.ProducerEpoch = r.env.Producer.ID, r.env.Producer.Epoch
	return appendRecordBatch(dst, rb)
}

// appendRecord appends r with its length prefix, which counts what
// follows it: r is encoded with a zero length (one byte), then the real
// one put in front.
func appendRecord(dst []byte, r kmsg.Record) []byte {
	enc := r.AppendTo(nil)[1:]
	dst = binary.AppendVarint(dst, int64(len(enc)))
	return append(dst, enc...)
}

// newBatch is the batch of recs whose records are body: no producer,
// uncompressed, CreateTime.
func newBatch(recs []kafkaRecord, body []byte, epoch int32) kmsg.RecordBatch {
	firstTs, maxTs := recs[0].env.Timestamp, recs[0].env.Timestamp
	for _, r := range recs {
		maxTs = max(maxTs, r.env.Timestamp)
	}
	return kmsg.RecordBatch{
		FirstOffset:          recs[0].offset,
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
}

// appendRecordBatch appends rb with its CRC-32C.
func appendRecordBatch(dst []byte, rb kmsg.RecordBatch) []byte {
	start := len(dst)
	dst = rb.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start+17:], crc32.Checksum(dst[start+21:], crc32c))
	return dst
}
