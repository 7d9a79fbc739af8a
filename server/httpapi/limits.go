package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/syntax"
)

// The limits that bound the memory one request, or many at once, can take.
// Each is a setting with a default (Config) or a constant, and each answer
// past one names the limit:
//
//   - a request's headers: MaxHeaderBytes (the HTTP server answers 431);
//   - a request's body: PYSTREAM_MAX_REQUEST_BYTES (413), read as it
//     arrives (readBody), never allocated from Content-Length;
//   - all bodies being read at once: PYSTREAM_MAX_INFLIGHT_BYTES (503 with
//     Retry-After, before the body is read);
//   - records per produce request: PYSTREAM_MAX_REQUEST_RECORDS (413),
//     counted before the body is decoded;
//   - a fetch answer: max records (MaxFetchRecords) and max_bytes of values
//     (PYSTREAM_FETCH_MAX_BYTES caps it), written as it is read through a
//     buffer of fetchWriteBuffer bytes, so a client that does not read its
//     answer holds about one chunk of records, not the answer;
//   - a name or value quoted back in an error: maxQuoted bytes (quoted).

// MaxHeaderBytes bounds a request's header section (request line
// included); a larger one is answered 431 by net/http.
const MaxHeaderBytes = 64 << 10

// Bounds of the limits' settings, which the server's configuration
// enforces (PYSTREAM_MAX_REQUEST_BYTES, PYSTREAM_MAX_REQUEST_RECORDS,
// PYSTREAM_MAX_INFLIGHT_BYTES, PYSTREAM_FETCH_MAX_BYTES).
const (
	// MinRequestBytes is the smallest body cap: room for a small JSON
	// request; MaxRequestBytesLimit the largest, 1 GiB.
	MinRequestBytes      = 1 << 10
	MaxRequestBytesLimit = 1 << 30
	// MaxRequestRecordsLimit is the largest cap on a produce request's
	// records: the one rule of both protocols (server/bounds).
	MaxRequestRecordsLimit = bounds.MaxRequestRecordsLimit
	// MinInflightBytes and MaxInflightBytesLimit bound the in-flight
	// budget.
	MinInflightBytes      = 1 << 20
	MaxInflightBytesLimit = 1 << 40
	// MinFetchMaxBytes and MaxFetchMaxBytesLimit bound the cap on a
	// fetch's max_bytes.
	MinFetchMaxBytes      = 1 << 10
	MaxFetchMaxBytesLimit = 1 << 30
)

// Defaults of the limits, taken by Config's zero fields.
const (
	// DefaultMaxRequestBytes caps a request body: 1 MiB.
	DefaultMaxRequestBytes = 1 << 20
	// DefaultMaxRequestRecords caps the records of a produce request,
	// over HTTP as over the Kafka protocol (server/bounds).
	DefaultMaxRequestRecords = bounds.DefaultMaxRequestRecords
	// DefaultMaxInflightBytes bounds the request bodies read at once.
	DefaultMaxInflightBytes = 256 << 20
	// DefaultFetchMaxBytes is a fetch's max_bytes when the request gives
	// none (never above the server's cap).
	DefaultFetchMaxBytes = 1 << 20
)

// quoted and clip cut a client's name or value before an error message
// or log line quotes it (syntax.Quote, syntax.Clip).
var quoted, clip = syntax.Quote, syntax.Clip

// checkContentEncoding refuses a body in any coding but identity: the
// server does not decompress, and storing a compressed body as a record's
// value would be a silent surprise.
func checkContentEncoding(r *http.Request) *apiError {
	for _, v := range r.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			c = strings.TrimSpace(c)
			if c != "" && !strings.EqualFold(c, "identity") {
				return newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
					"Content-Encoding %s is not supported; send the body uncompressed (identity)", quoted(c))
			}
		}
	}
	return nil
}

// readBodyFirst is the buffer a body is first read into; it grows (by
// doubling) only as bytes arrive.
const readBodyFirst = 16 << 10

// readBody reads the whole (already capped) body into a buffer that grows
// with what is read. Content-Length only makes the first buffer smaller:
// a client that announces 64 MiB and sends one byte costs one small
// buffer, not 64 MiB.
func readBody(r *http.Request) ([]byte, error) {
	first := int64(readBodyFirst)
	if r.ContentLength >= 0 && r.ContentLength < first {
		first = r.ContentLength + 1 // +1: room to see the end without growing
	}
	buf := make([]byte, 0, first)
	for {
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// bodyCost is what a request's body may take in memory: its
// Content-Length, or the body cap when it is chunked. A body larger than
// the cap costs nothing here: its handler refuses it (413) unread.
func bodyCost(r *http.Request, maxBody int64) int64 {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return 0
	case r.ContentLength < 0:
		return maxBody
	case r.ContentLength > maxBody:
		return 0
	}
	return r.ContentLength
}

// admit reserves a request's body cost (bodyCost) for as long as its
// handler runs, and answers 503 with Retry-After, before anything is read,
// when the reservation would pass PYSTREAM_MAX_INFLIGHT_BYTES. A body
// alone larger than the limit is refused the same way: it could never be
// admitted.
func (a *API) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cost := bodyCost(r, a.maxBody)
		if cost == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if !a.inflight.Acquire(cost) {
			w.Header().Set("Retry-After", "1")
			writeAPIError(w, newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
				"server busy: request bodies in flight would pass %d bytes (PYSTREAM_MAX_INFLIGHT_BYTES); retry later", a.inflight.Limit()))
			return
		}
		defer a.inflight.Release(cost)
		next.ServeHTTP(w, r)
	})
}

// countItems returns how many elements the array under key (matched as
// encoding/json matches keys, ignoring case; a key with an escape counts
// as a match) in the top-level object of data has, stopping as soon as
// the count passes stop. It is a byte scan that allocates nothing, so a
// produce body is measured before it is decoded: decoding a million empty
// records takes hundreds of megabytes. Malformed JSON gives some count;
// the decoder reports it after.
func countItems(data []byte, key string, stop int) int {
	var (
		depth    int
		inStr    bool
		esc      bool
		strStart int
		lastStr  []byte
		matched  bool // the key just read (depth 1) is key
		counting bool // inside the array under key
		sawItem  bool
		n, best  int
	)
	for i, c := range data {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
				if depth == 1 {
					lastStr = data[strStart:i]
				}
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		case '"':
			inStr, strStart = true, i+1
			sawItem = sawItem || (counting && depth == 2)
		case ':':
			if depth == 1 {
				matched = bytes.EqualFold(lastStr, []byte(key)) || bytes.IndexByte(lastStr, '\\') >= 0
			}
		case '{', '[':
			sawItem = sawItem || (counting && depth == 2)
			depth++
			if depth == 2 && c == '[' && matched {
				counting, sawItem, n = true, false, 0
			}
		case '}', ']':
			depth--
			if depth == 1 && counting {
				if sawItem {
					n++
				}
				best, counting = max(best, n), false
			}
		case ',':
			if depth == 1 {
				matched = false
			}
			if counting && depth == 2 {
				n++
				if n > stop {
					return n
				}
			}
		default:
			sawItem = sawItem || (counting && depth == 2)
		}
	}
	if counting && sawItem {
		n++
	}
	return max(best, n)
}

// clipMessage cuts a message a library wrote, which may quote a client's
// key in full (`unknown field "aaaa..."`), to a few times syntax.MaxQuoted.
func clipMessage(s string) string {
	const limit = 4 * syntax.MaxQuoted
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
