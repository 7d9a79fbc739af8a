package server

import (
	"bufio"
	"encoding/base64"
	"io"
	"strconv"

	"github.com/pystream/pystream/log"
)

// fetchWriteBuffer is the buffer a fetch answer is encoded into before it
// goes to the connection.
const fetchWriteBuffer = 32 << 10

// fetchBase64Piece is how many value bytes are base64-encoded at a time: a
// multiple of 3, so the pieces join into one valid encoding.
const fetchBase64Piece = 3 << 12

// fetchEncoder writes a fetch answer,
//
//	{"records":[{"offset":0,"timestamp":...,"timestamp_ms":...,"value":"aGVsbG8="}],"next_offset":1,"log_start":0,"high_watermark":5,"log_end":5}
//
// record by record, byte for byte what json.Marshal of
// apiclient.FetchResponse writes plus the newline (a test compares the
// two), holding no more than its buffers whatever the values' sizes. The
// first write error stops it (err); the client has gone.
type fetchEncoder struct {
	w       *bufio.Writer
	scratch []byte
	n       int // records written
	err     error
}

func newFetchEncoder(w io.Writer) *fetchEncoder {
	return &fetchEncoder{w: bufio.NewWriterSize(w, fetchWriteBuffer), scratch: make([]byte, 0, 64)}
}

func (e *fetchEncoder) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *fetchEncoder) begin() { e.write([]byte(`{"records":[`)) }

func (e *fetchEncoder) record(rec log.Record) {
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
	b = append(b, `,"value":"`...)
	e.write(b)
	for v := rec.Payload; len(v) > 0 && e.err == nil; {
		piece := v[:min(len(v), fetchBase64Piece)]
		v = v[len(piece):]
		e.scratch = base64.StdEncoding.AppendEncode(e.scratch[:0], piece)
		e.write(e.scratch)
	}
	e.write([]byte(`"}`))
	e.scratch = e.scratch[:0]
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
