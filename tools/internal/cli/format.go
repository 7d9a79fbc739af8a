package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pystream/pystream/server/apiclient"
)

// consumedRecord is one record as consume prints it.
type consumedRecord struct {
	Topic     string
	Partition int
	apiclient.FetchedRecord
}

// formatPart is one piece of a compiled -f format: a literal, or a verb
// ('t', 'p', 'o', 'T', 'k', 'K', 'h', 'v', 'S').
type formatPart struct {
	literal string
	verb    byte
}

// compileFormat parses a kcat-style -f format:
//
//	%t topic   %p partition   %o offset
//	%T timestamp, ms since the epoch: the producer's (create_timestamp_ms)
//	   when it gave one, else the partition's
//	%k key (empty when none)   %K key size (-1 when none)
//	%h headers, NAME=VALUE joined by commas (a null value: NAME alone)
//	%v value   %S value size
//	%% a percent sign;  \n \t \r \\ escapes
//
// No newline is added: end the format with \n for one record per line.
// An unknown verb is an error.
func compileFormat(f string) ([]formatPart, error) {
	var parts []formatPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, formatPart{literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(f); i++ {
		ch := f[i]
		switch {
		case ch == '%':
			if i+1 >= len(f) {
				return nil, fmt.Errorf("format %q ends with a lone %%", f)
			}
			i++
			switch v := f[i]; v {
			case '%':
				lit.WriteByte('%')
			case 't', 'p', 'o', 'T', 'k', 'K', 'h', 'v', 'S':
				flush()
				parts = append(parts, formatPart{verb: v})
			default:
				return nil, fmt.Errorf("format %q: unknown verb %%%c (want %%t %%p %%o %%T %%k %%K %%h %%v %%S or %%%%)", f, v)
			}
		case ch == '\\' && i+1 < len(f):
			if r, ok := escapeByte(f[i+1]); ok {
				lit.WriteByte(r)
				i++
				continue
			}
			lit.WriteByte(ch)
		default:
			lit.WriteByte(ch)
		}
	}
	flush()
	return parts, nil
}

// escapeByte maps the letter after a backslash to the byte it stands for.
func escapeByte(c byte) (byte, bool) {
	switch c {
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	case 'r':
		return '\r', true
	case '\\':
		return '\\', true
	}
	return 0, false
}

// unescape applies the \n \t \r \\ escapes to s (for -K).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if r, ok := escapeByte(s[i+1]); ok {
				b.WriteByte(r)
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// appendFormatted appends r rendered by parts to dst.
func appendFormatted(dst []byte, parts []formatPart, r consumedRecord) []byte {
	for _, p := range parts {
		switch p.verb {
		case 0:
			dst = append(dst, p.literal...)
		case 't':
			dst = append(dst, r.Topic...)
		case 'p':
			dst = strconv.AppendInt(dst, int64(r.Partition), 10)
		case 'o':
			dst = strconv.AppendUint(dst, r.Offset, 10)
		case 'T':
			if r.CreateTimestampMS != nil {
				dst = strconv.AppendInt(dst, *r.CreateTimestampMS, 10)
			} else {
				dst = strconv.AppendInt(dst, r.Timestamp/1e6, 10)
			}
		case 'k':
			dst = append(dst, r.Key...)
		case 'K':
			if r.Key == nil {
				dst = append(dst, "-1"...)
			} else {
				dst = strconv.AppendInt(dst, int64(len(r.Key)), 10)
			}
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, h.Key...)
				if h.Value != nil {
					dst = append(dst, '=')
					dst = append(dst, h.Value...)
				}
			}
		case 'v':
			dst = append(dst, r.Value...)
		case 'S':
			dst = strconv.AppendInt(dst, int64(len(r.Value)), 10)
		}
	}
	return dst
}

// consumeJSON is the default output of consume, one object per line. The
// value is a string when it is valid UTF-8, else value_b64 holds its exact
// bytes in standard base64; the same for the key (omitted when the record
// has none) and each header value. A null value (a tombstone) has neither.
type consumeJSON struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    uint64 `json:"offset"`
	// Timestamp is nanoseconds since the Unix epoch, as in the API.
	Timestamp         int64        `json:"timestamp"`
	CreateTimestampMS *int64       `json:"create_timestamp_ms,omitempty"`
	Key               *string      `json:"key,omitempty"`
	KeyB64            []byte       `json:"key_b64,omitempty"`
	Headers           []headerJSON `json:"headers,omitempty"`
	Value             *string      `json:"value,omitempty"`
	ValueB64          []byte       `json:"value_b64,omitempty"`
}

// headerJSON is one header in consume's JSON output.
type headerJSON struct {
	Key      string  `json:"key"`
	Value    *string `json:"value,omitempty"`
	ValueB64 []byte  `json:"value_b64,omitempty"`
}

// textOrB64 splits b into the string form (valid UTF-8) or the base64 form
// of consume's JSON output; nil b is neither.
func textOrB64(b []byte) (*string, []byte) {
	switch {
	case b == nil:
		return nil, nil
	case utf8.Valid(b):
		s := string(b)
		return &s, nil
	default:
		return nil, b
	}
}

// toConsumeJSON builds the default output form of r.
func toConsumeJSON(r consumedRecord) consumeJSON {
	j := consumeJSON{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp,
		CreateTimestampMS: r.CreateTimestampMS}
	j.Key, j.KeyB64 = textOrB64(r.Key)
	for _, h := range r.Headers {
		hj := headerJSON{Key: h.Key}
		hj.Value, hj.ValueB64 = textOrB64(h.Value)
		j.Headers = append(j.Headers, hj)
	}
	j.Value, j.ValueB64 = textOrB64(r.Value)
	return j
}

// jsonLine writes v as one line of JSON to w.
func jsonLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
