package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/pystream/pystream/topic"
)

// Limits on numbers in requests, beyond what the libraries check.
const (
	// MaxPartitions is the largest partition count POST /api/topics
	// accepts: every partition is a directory and a file per replica, so
	// an unbounded count would let one request fill the disk.
	MaxPartitions = 1024
	// DefaultFetchMax is the number of records a fetch returns at most
	// when the request says nothing.
	DefaultFetchMax = 100
	// MaxFetchRecords caps a fetch's max: a larger max is served as this
	// many.
	MaxFetchRecords = 1000
	// MaxFetchBytes bounds a fetch answer in value bytes, like Kafka's
	// fetch.max.bytes: records are added until their values reach it.
	// An answer holds at least one record (else a record above the
	// budget could never be read), so it may exceed the budget by one
	// record, at most the log's maximum payload.
	MaxFetchBytes = 4 << 20
	// maxIndex bounds partition and broker numbers in paths; anything
	// larger does not exist and is refused as invalid before any lookup.
	maxIndex = 1<<31 - 1
)

// Media types the API reads.
const (
	mediaJSON        = "application/json"
	mediaOctetStream = "application/octet-stream"
)

// mediaType returns the request's media type, lower case, without
// parameters. A JSON body may say charset=utf-8 and nothing else.
func mediaType(r *http.Request) (string, *apiError) {
	ct := r.Header.Get("Content-Type")
	switch ct { // the common exact forms, without parsing
	case mediaJSON, mediaOctetStream:
		return ct, nil
	case "":
		return "", newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "missing Content-Type; send %s", mediaJSON)
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "malformed Content-Type %q", ct)
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") || mt != mediaJSON {
			return "", newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "unsupported Content-Type parameter %s=%q", k, v)
		}
	}
	return mt, nil
}

// limitBody caps r.Body at the configured size. A Content-Length above the
// cap is refused before anything is read; a chunked body is cut off where
// it crosses the cap, and the read fails with *http.MaxBytesError.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request) *apiError {
	if r.ContentLength > s.maxBody {
		return s.tooLarge()
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	return nil
}

func (s *Server) tooLarge() *apiError {
	return newAPIError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
		"request body larger than %d bytes (PYSTREAM_MAX_REQUEST_BYTES)", s.maxBody)
}

// readJSON decodes the request body into v strictly: Content-Type must be
// application/json, the body at most the configured size, a single JSON
// value with no unknown fields and nothing after it, every value of the
// right type and in the range of its Go field.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) *apiError {
	mt, ae := mediaType(r)
	if ae != nil {
		return ae
	}
	if mt != mediaJSON {
		return newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "Content-Type %s is not accepted here; send %s", mt, mediaJSON)
	}
	if ae := s.limitBody(w, r); ae != nil {
		return ae
	}
	// The whole (capped) body first: the key check below walks it a
	// second time.
	data, err := readBody(r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return s.tooLarge()
		}
		return badRequest("cannot read the request body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return s.jsonError(err)
	}
	// Exactly one value: anything but white space after it is refused.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("invalid JSON body: data after the JSON value")
	}
	if err := checkJSONKeys(data, reflect.TypeOf(v)); err != nil {
		return badRequest("invalid JSON body: %v", err)
	}
	return nil
}

// jsonError explains why a body could not be decoded.
func (s *Server) jsonError(err error) *apiError {
	var (
		tooBig *http.MaxBytesError
		syn    *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooBig):
		return s.tooLarge()
	case errors.Is(err, io.EOF):
		return badRequest("empty body; expected a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("invalid JSON body: unexpected end")
	case errors.As(err, &syn):
		return badRequest("invalid JSON body at byte %d: %v", syn.Offset, err)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the body"
		}
		return badRequest("invalid JSON body: %s: a JSON %s is not a valid %s here", field, typ.Value, typ.Type)
	}
	// Unknown fields, bad base64 and the like: json reports them as plain
	// errors; their text names the problem.
	return badRequest("invalid JSON body: %v", err)
}

// noBody refuses a request body on an endpoint that takes none.
func (s *Server) noBody(w http.ResponseWriter, r *http.Request) *apiError {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if ae := s.limitBody(w, r); ae != nil {
		return ae
	}
	var one [1]byte
	if n, _ := io.ReadFull(r.Body, one[:]); n > 0 {
		return badRequest("this endpoint takes no request body")
	}
	return nil
}

// nameParam returns a path wildcard that must be a topic name or consumer
// id, validated before it goes anywhere near a file path. what names it in
// messages ("topic", "consumer id").
func nameParam(r *http.Request, key, what string) (string, *apiError) {
	v := r.PathValue(key)
	if err := topic.ValidateName(v); err != nil {
		return "", badRequest("invalid %s %q: 1 to %d characters of A-Z a-z 0-9 . _ -, not . or ..", what, v, topic.MaxNameLength)
	}
	return v, nil
}

// partitionParam returns the {p} path wildcard: a decimal partition index.
func partitionParam(r *http.Request) (int, *apiError) {
	v := r.PathValue("p")
	n, ok := parseIndex(v, 0)
	if !ok {
		return 0, badRequest("invalid partition %q: a decimal integer from 0", v)
	}
	return n, nil
}

// brokerParam returns a broker id path wildcard: a decimal integer >= 1.
func brokerParam(r *http.Request, key string) (int, *apiError) {
	v := r.PathValue(key)
	n, ok := parseIndex(v, 1)
	if !ok {
		return 0, badRequest("invalid broker id %q: a decimal integer from 1", v)
	}
	return n, nil
}

// parseIndex accepts only ASCII digits, a value from lo to maxIndex.
func parseIndex(s string, lo int) (int, bool) {
	n, ok := parseUint(s, maxIndex)
	if !ok || n < uint64(lo) {
		return 0, false
	}
	return int(n), true
}

// parseUint accepts only ASCII digits (no sign, space or base prefix) and a
// value up to hi.
func parseUint(s string, hi uint64) (uint64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > hi {
		return 0, false
	}
	return n, true
}

// queryParams parses the query string strictly: well-formed, every key one
// of allowed, none repeated. A typo such as ?ofset=5 is an error rather
// than silently ignored.
func queryParams(r *http.Request, allowed ...string) (map[string]string, *apiError) {
	if r.URL.RawQuery == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("malformed query string: %v", err)
	}
	out := make(map[string]string, len(q))
	for k, vs := range q {
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			return nil, badRequest("unknown query parameter %q; allowed: %s", k, strings.Join(allowed, ", "))
		}
		if len(vs) != 1 {
			return nil, badRequest("query parameter %q given %d times", k, len(vs))
		}
		out[k] = vs[0]
	}
	return out, nil
}

// readBody reads the whole (already capped) body, into a buffer of the
// announced size when there is one.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength >= 0 {
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(r.Body)
}
