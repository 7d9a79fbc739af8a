package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pystream/pystream/log"
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
func dumpLine(seg string, pos int64, r log.Record, printData bool) string {
	where := fmt.Sprintf("position: %d", pos)
	if seg != "" {
		where += " segment: " + seg
	}
	return fmt.Sprintf("offset: %d %s timestamp: %d (%s) size: %d payload: %s",
		r.Offset, where, r.Timestamp, formatTime(r.Timestamp), len(r.Payload), preview(r.Payload, printData))
}

// preview quotes p, cut to previewBytes unless full is set.
func preview(p []byte, full bool) string {
	if full || len(p) <= previewBytes {
		return strconv.Quote(string(p))
	}
	return strconv.Quote(string(p[:previewBytes])) + "..."
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
	return d
}
