package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic/envelope"
)

// previewBytes is how much of a payload `log dump` shows without
// --print-data.
const previewBytes = 32

// dumpLine is one record as `log dump` prints it, for example:
//
//	offset: 0 position: 0 timestamp: 1700000000000000000 (2023-11-14T22:13:20Z) size: 5 payload: "hello"
//
// The payload is Go-quoted so that any byte is visible and the line stays
// one line; without printData it is cut to previewBytes and the full size is
// given after it. A record of a log directory names its segment file, the
// file its position is in, after the position:
//
//	offset: 2 position: 0 segment: 00000000000000000002.log timestamp: ...
//
// A payload that is an envelope (topic/envelope: a record produced with a
// key, headers or a create time over HTTP or Kafka) is shown decoded, its
// key and value previewed alike, a null one as null, and an idempotent
// producer's identity when the record has one:
//
//	offset: 3 position: 96 timestamp: ... size: 24 key: "user-1" headers: trace="abc",n create_time: 1700000000000 value: "hello"
//	offset: 4 position: 150 timestamp: ... size: 33 key: null create_time: 1700000000001 producer_id: 12 producer_epoch: 0 sequence: 7 value: "hi"
func dumpLine(seg string, pos int64, r log.Record, printData bool) string {
	where := fmt.Sprintf("position: %d", pos)
	if seg != "" {
		where += " segment: " + seg
	}
	line := fmt.Sprintf("offset: %d %s timestamp: %d (%s) size: %d ",
		r.Offset, where, r.Timestamp, formatTime(r.Timestamp), len(r.Payload))
	env, err := envelope.Parse(r.Payload)
	if err != nil {
		return line + "payload: " + preview(r.Payload, printData)
	}
	line += "key: " + previewNull(env.Key, printData)
	if len(env.Headers) > 0 {
		hs := make([]string, len(env.Headers))
		for i, h := range env.Headers {
			q := strconv.Quote(h.Key)
			hs[i] = q[1 : len(q)-1]
			if h.Value != nil {
				hs[i] += "=" + preview(h.Value, printData)
			}
		}
		line += " headers: " + strings.Join(hs, ",")
	}
	if env.HasTimestamp {
		line += " create_time: " + strconv.FormatInt(env.Timestamp, 10)
	}
	if env.HasProducer {
		line += fmt.Sprintf(" producer_id: %d producer_epoch: %d sequence: %d",
			env.Producer.ID, env.Producer.Epoch, env.Producer.Sequence)
		if env.Transactional {
			line += " transactional: true"
		}
		if env.Marker != envelope.NoMarker {
			line += " marker: " + env.Marker.String()
		}
	}
	return line + " value: " + previewNull(env.Value, printData)
}

// preview quotes p, cut to previewBytes unless full is set.
func preview(p []byte, full bool) string {
	if full || len(p) <= previewBytes {
		return strconv.Quote(string(p))
	}
	return strconv.Quote(string(p[:previewBytes])) + "..."
}

// previewNull is preview, with null for nil (no key, a null value).
func previewNull(p []byte, full bool) string {
	if p == nil {
		return "null"
	}
	return preview(p, full)
}

// formatTime renders a nanosecond timestamp as an RFC 3339 date in UTC.
func formatTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// dumpRecord is one record of `log dump --json`.
type dumpRecord struct {
	Offset   uint64 `json:"offset"`
	Position int64  `json:"position"`
	// Segment is the segment file Position is in, for a log directory.
	Segment   string `json:"segment,omitempty"`
	Timestamp int64  `json:"timestamp"`
	Time      string `json:"time"`
	Size      int    `json:"size"`
	// Preview is the payload, cut to previewBytes and Go-escaped (without
	// --print-data); Truncated says whether it was cut.
	Preview   *string `json:"preview,omitempty"`
	Truncated bool    `json:"truncated,omitempty"`
	// Payload is the whole payload, base64 in JSON (with --print-data).
	Payload []byte `json:"payload,omitempty"`
	// Envelope is the payload decoded, when it is an envelope.
	Envelope *dumpEnvelope `json:"envelope,omitempty"`
}

// dumpEnvelope is a payload that is an envelope, decoded: the key and
// headers whole (base64, null for none), the create time and producer
// identity when it has them, the value's size, and the value itself with
// --print-data.
type dumpEnvelope struct {
	Key               []byte        `json:"key"`
	Headers           []dumpHeader  `json:"headers,omitempty"`
	CreateTimestampMS *int64        `json:"create_timestamp_ms,omitempty"`
	Producer          *dumpProducer `json:"producer,omitempty"`
	// ValueSize is -1 for a null value.
	ValueSize int    `json:"value_size"`
	Value     []byte `json:"value,omitempty"`
}

// dumpProducer is the idempotent producer identity of a dumpEnvelope.
type dumpProducer struct {
	ID       int64 `json:"id"`
	Epoch    int16 `json:"epoch"`
	Sequence int32 `json:"sequence"`
	// Transactional and Marker: a transaction's record, and its
	// marker ("commit" or "abort").
	Transactional bool   `json:"transactional,omitempty"`
	Marker        string `json:"marker,omitempty"`
}

// dumpHeader is one header of a dumpEnvelope.
type dumpHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

func newDumpEnvelope(payload []byte, printData bool) *dumpEnvelope {
	env, err := envelope.Parse(payload)
	if err != nil {
		return nil
	}
	d := &dumpEnvelope{Key: env.Key, ValueSize: len(env.Value)}
	if env.Value == nil {
		d.ValueSize = -1
	} else if printData {
		d.Value = env.Value
	}
	if env.HasTimestamp {
		d.CreateTimestampMS = &env.Timestamp
	}
	if env.HasProducer {
		d.Producer = &dumpProducer{ID: env.Producer.ID, Epoch: env.Producer.Epoch, Sequence: env.Producer.Sequence, Transactional: env.Transactional}
		if env.Marker != envelope.NoMarker {
			d.Producer.Marker = env.Marker.String()
		}
	}
	for _, h := range env.Headers {
		d.Headers = append(d.Headers, dumpHeader{Key: h.Key, Value: h.Value})
	}
	return d
}

func newDumpRecord(seg string, pos int64, r log.Record, printData bool) dumpRecord {
	d := dumpRecord{Offset: r.Offset, Position: pos, Segment: seg, Timestamp: r.Timestamp, Time: formatTime(r.Timestamp), Size: len(r.Payload)}
	if printData {
		d.Payload = r.Payload
		if d.Payload == nil {
			d.Payload = []byte{}
		}
	} else {
		p := r.Payload[:min(len(r.Payload), previewBytes)]
		q := strconv.Quote(string(p))
		q = q[1 : len(q)-1]
		d.Preview = &q
		d.Truncated = len(r.Payload) > previewBytes
	}
	d.Envelope = newDumpEnvelope(r.Payload, printData)
	return d
}
