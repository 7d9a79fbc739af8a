package httpapi

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic/envelope"
)

// fetchWriteBuffer is the buffer a fetch answer is encoded into before it
// goes to the connection.
const fetchWriteBuffer = 32 << 10

// fetchBase64Piece is how many value bytes are base64-encoded at a time: a
// multiple of 3, so the pieces join into one valid encoding.
const fetchBase64Piece = 3 << 12

// fetchEncoder writes a fetch answer,
//
//	{"records":[{"offset":0,"timestamp":...,"timestamp_ms":...,"key":null,"value":"aGVsbG8="}],"next_offset":1,"log_start":0,"high_watermark":5,"log_end":5}
//
// record by record, byte for byte what json.Marshal of
// apiclient.FetchResponse writes plus the newline (a test compares the
// two), holding no more than its buffers whatever the values' sizes. Each
// payload is read with envelope.Parse: its key, headers, create time,
// producer identity, transactional flag and marker when it is an
// envelope, the payload as the value otherwise. The first
// write error stops it (err); the client has gone.
type fetchEncoder struct {
	w       *bufio.Writer
	scratch []byte
	n       int // records written
	err     error
}

func newFetchEncoder(w io.Writer) *fetchEncoder {
	return &fetchEncoder{w: bufio.NewWriterSize(w, fetchWriteBuffer), scratch: make([]byte, 0, 256)}
}

func (e *fetchEncoder) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// writeString is write for the answer's fixed pieces: a string, so that
// none is converted (and allocated) as a []byte.
func (e *fetchEncoder) writeString(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

func (e *fetchEncoder) begin() { e.writeString(`{"records":[`) }

// fetchedRecord is what the answer says of a stored payload: the record
// its envelope holds, or the payload itself as the value (an empty one
// when the log gave nil: a plain payload is never a null value).
func fetchedRecord(payload []byte) envelope.Record {
	r, err := envelope.Parse(payload)
	if err != nil {
		if payload == nil {
			payload = []byte{}
		}
		return envelope.Record{Value: payload}
	}
	return r
}

// markerName is a marker's name in an answer (apiclient.FetchedRecord's
// Marker): "" for a record that is no marker.
func markerName(m envelope.Marker) string {
	switch m {
	case envelope.CommitMarker:
		return apiclient.MarkerCommit
	case envelope.AbortMarker:
		return apiclient.MarkerAbort
	}
	return ""
}

// fetchedRecordOf is what an answer says of a stored record, as the
// struct json.Marshal writes: what fetchEncoder.record streams
// (TestLimitsFetchEncoderMatchesJSON holds the two together).
func fetchedRecordOf(rec log.Record) apiclient.FetchedRecord {
	r := fetchedRecord(rec.Payload)
	out := apiclient.FetchedRecord{Offset: rec.Offset, Timestamp: rec.Timestamp, TimestampMS: unixMillis(rec.Timestamp), Key: r.Key, Value: r.Value}
	if r.HasTimestamp {
		out.CreateTimestampMS = &r.Timestamp
	}
	if r.HasProducer {
		out.Producer = &apiclient.ProducerIdentity{ID: r.Producer.ID, Epoch: r.Producer.Epoch, Sequence: r.Producer.Sequence}
	}
	out.Transactional, out.Marker = r.Transactional, markerName(r.Marker)
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, apiclient.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return out
}

func (e *fetchEncoder) record(rec log.Record) {
	r := fetchedRecord(rec.Payload)
	b := e.scratch[:0]
	if e.n > 0 {
		b = append(b, ',')
	}
	e.n++
	b = append(b, `{"offset":`...)
	b = strconv.AppendUint(b, rec.Offset, 10)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, rec.Timestamp, 10)
	b = append(b, `,"timestamp_ms":`...)
	b = strconv.AppendInt(b, unixMillis(rec.Timestamp), 10)
	if r.HasTimestamp {
		b = append(b, `,"create_timestamp_ms":`...)
		b = strconv.AppendInt(b, r.Timestamp, 10)
	}
	b = appendIdentity(b, r)
	b = append(b, `,"key":`...)
	e.write(b)
	e.scratch = b[:0] // keep what it grew to: the next record needs as much
	e.bytes(r.Key)
	if len(r.Headers) > 0 {
		e.writeString(`,"headers":[`)
		for i, h := range r.Headers {
			b = e.scratch[:0]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			k, _ := json.Marshal(h.Key) // a string always marshals
			b = append(b, k...)
			b = append(b, `,"value":`...)
			e.write(b)
			e.scratch = b[:0]
			e.bytes(h.Value)
			e.writeString("}")
		}
		e.writeString("]")
	}
	e.writeString(`,"value":`)
	e.bytes(r.Value)
	e.writeString("}")
	e.scratch = e.scratch[:0]
}

// appendIdentity appends what r's envelope says of its producer, as
// json.Marshal writes FetchedRecord's Producer, Transactional and Marker:
// nothing for a record without them.
func appendIdentity(b []byte, r envelope.Record) []byte {
	if r.HasProducer {
		b = append(b, `,"producer":{"id":`...)
		b = strconv.AppendInt(b, r.Producer.ID, 10)
		b = append(b, `,"epoch":`...)
		b = strconv.AppendInt(b, int64(r.Producer.Epoch), 10)
		b = append(b, `,"sequence":`...)
		b = strconv.AppendInt(b, int64(r.Producer.Sequence), 10)
		b = append(b, '}')
	}
	if r.Transactional {
		b = append(b, `,"transactional":true`...)
	}
	if m := markerName(r.Marker); m != "" {
		b = append(b, `,"marker":"`...)
		b = append(b, m...)
		b = append(b, '"')
	}
	return b
}

// bytes writes v as json.Marshal writes a []byte: null for nil, else a
// base64 string, encoded a piece at a time.
func (e *fetchEncoder) bytes(v []byte) {
	if v == nil {
		e.writeString("null")
		return
	}
	e.writeString(`"`)
	for len(v) > 0 && e.err == nil {
		piece := v[:min(len(v), fetchBase64Piece)]
		v = v[len(piece):]
		e.scratch = base64.StdEncoding.AppendEncode(e.scratch[:0], piece)
		e.write(e.scratch)
	}
	e.writeString(`"`)
}

// end closes the records and writes the rest, then flushes.
func (e *fetchEncoder) end(next uint64, tail fetchTail) {
	b := append(e.scratch[:0], `],"next_offset":`...)
	b = strconv.AppendUint(b, next, 10)
	b = append(b, `,"log_start":`...)
	b = strconv.AppendUint(b, tail.logStart, 10)
	b = append(b, `,"high_watermark":`...)
	b = strconv.AppendUint(b, tail.hwm, 10)
	b = append(b, `,"log_end":`...)
	b = strconv.AppendUint(b, tail.logEnd, 10)
	b = append(b, "}\n"...)
	e.write(b)
	if e.err == nil {
		e.err = e.w.Flush()
	}
}
