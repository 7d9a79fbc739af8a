package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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
		return "", newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "malformed Content-Type %s", quoted(ct))
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") || mt != mediaJSON {
			return "", newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "unsupported Content-Type parameter %s=%s", quoted(k), quoted(v))
		}
	}
	return mt, nil
}

// limitBody caps r.Body at the configured size. A Content-Length above the
// cap is refused before anything is read; a chunked body is cut off where
// it crosses the cap, and the read fails with *http.MaxBytesError.
func (a *API) limitBody(w http.ResponseWriter, r *http.Request) *apiError {
	if ae := checkContentEncoding(r); ae != nil {
		return ae
	}
	if r.ContentLength > a.maxBody {
		return a.tooLarge()
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.maxBody)
	return nil
}

func (a *API) tooLarge() *apiError {
	return newAPIError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
		"request body larger than %d bytes (PYSTREAM_MAX_REQUEST_BYTES)", a.maxBody)
}

// readJSON decodes the request body into v strictly: Content-Type must be
// application/json, the body at most the configured size, a single JSON
// value with no unknown fields and nothing after it, every value of the
// right type and in the range of its Go field.
func (a *API) readJSON(w http.ResponseWriter, r *http.Request, v any) *apiError {
	return a.readJSONChecked(w, r, v, nil)
}

// readJSONChecked is readJSON with a check of the raw body before it is
// decoded (nil: none), for limits that decoding itself would break.
func (a *API) readJSONChecked(w http.ResponseWriter, r *http.Request, v any, check func(data []byte) *apiError) *apiError {
	mt, ae := mediaType(r)
	if ae != nil {
		return ae
	}
	if mt != mediaJSON {
		return newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "Content-Type %s is not accepted here; send %s", mt, mediaJSON)
	}
	if ae := a.limitBody(w, r); ae != nil {
		return ae
	}
	// The whole (capped) body first: the key check below walks it a
	// second time.
	data, err := readBody(r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return a.tooLarge()
		}
		return badRequest("cannot read the request body: %v", err)
	}
	if check != nil {
		if ae := check(data); ae != nil {
			return ae
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return a.jsonError(err, data, reflect.TypeOf(v))
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

// jsonError explains why a body could not be decoded, naming the value at
// fault by its position in the body ("records[2].value") when the decoder
// does not: data is the body, t the type it was decoded into.
func (a *API) jsonError(err error, data []byte, t reflect.Type) *apiError {
	var (
		tooBig  *http.MaxBytesError
		syn     *json.SyntaxError
		typ     *json.UnmarshalTypeError
		corrupt base64.CorruptInputError
	)
	switch {
	case errors.As(err, &tooBig):
		return a.tooLarge()
	case errors.Is(err, io.EOF):
		return badRequest("empty body; expected a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("invalid JSON body: unexpected end")
	case errors.As(err, &syn):
		return badRequest("invalid JSON body at byte %d: %v", syn.Offset, err)
	case errors.As(err, &typ):
		field := "the body"
		if typ.Field != "" {
			field = typ.Field
			// The decoder names a field without the index of the
			// array element it is in: find the first one at fault.
			if at, ok := findJSONValue(data, t, func(at string, ft reflect.Type, kind string) bool {
				return stripIndexes(at) == typ.Field && kind != "null" && kind != jsonKind(ft)
			}); ok {
				field = at
			}
		}
		if n, ok := strings.CutPrefix(typ.Value, "number "); ok && isInteger(n) && !strings.HasPrefix(n, "-") && jsonKind(typ.Type) == "number" {
			return badRequest("invalid JSON body: %s: %s is too large", field, clip(n))
		}
		return badRequest("invalid JSON body: %s: expected %s, got %s", field, jsonExpected(typ.Type), clip(jsonGot(typ.Value)))
	case errors.As(err, &corrupt):
		// encoding/json reports bad base64 without saying where.
		field := "a base64 value"
		if at, ok := findJSONValue(data, t, func(at string, ft reflect.Type, kind string) bool {
			return false
		}); ok {
			field = at
		}
		return badRequest("invalid JSON body: %s: not valid base64 %s", field, base64Hint)
	}
	// Unknown fields and the like: json reports them as plain errors
	// whose text names the problem, after its package's prefix.
	return badRequest("invalid JSON body: %s", clipMessage(strings.TrimPrefix(err.Error(), "json: ")))
}

// base64Hint says what base64 the API reads.
const base64Hint = `(standard base64 with padding, e.g. "aGVsbG8=")`

// findJSONValue walks the JSON document data alongside the Go type t it
// decodes into and returns the position ("records[2].value") of the first
// scalar for which bad is true, or of the first string bound for a []byte
// field that is not valid standard base64. kind is the scalar's JSON kind
// ("string", "number", "bool", "null"), ft the type of the field it
// decodes into (nil when t does not describe it). Keys match fields as
// encoding/json matches them, ignoring case.
func findJSONValue(data []byte, t reflect.Type, bad func(at string, ft reflect.Type, kind string) bool) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var at string
	found := walkJSONValues(dec, t, "", func(pos string, ft reflect.Type, tok json.Token) bool {
		kind := tokenKind(tok)
		if bad(pos, ft, kind) || (isBytes(ft) && kind == "string" && !validBase64(tok.(string))) {
			at = pos
			return true
		}
		return false
	})
	return at, found
}

// walkJSONValues calls visit for every scalar of the next value of dec
// until it returns true; it reports whether one did. A malformed document
// ends the walk.
func walkJSONValues(dec *json.Decoder, t reflect.Type, at string, visit func(at string, ft reflect.Type, tok json.Token) bool) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return visit(at, t, tok)
	}
	switch delim {
	case '[':
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Slice && !isBytes(t) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if walkJSONValues(dec, elem, fmt.Sprintf("%s[%d]", at, i), visit) {
				return true
			}
		}
	case '{':
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return false
			}
			key, _ := tok.(string)
			var ft reflect.Type
			for name, f := range fields {
				if strings.EqualFold(name, key) {
					ft = f
					if name == key {
						break
					}
				}
			}
			where := key
			if at != "" {
				where = at + "." + key
			}
			if walkJSONValues(dec, ft, where, visit) {
				return true
			}
		}
	}
	_, _ = dec.Token() // the closing ']' or '}'
	return false
}

func isBytes(t reflect.Type) bool {
	return t != nil && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
}

func validBase64(s string) bool {
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

// tokenKind is the JSON kind of a scalar token.
func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

// jsonKind is the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		if isBytes(t) {
			return "string"
		}
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return ""
}

// jsonExpected says in JSON's words what a Go type accepts.
func jsonExpected(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer from 0"
	case reflect.Slice:
		if isBytes(t) {
			return "a string of standard base64"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another type"
}

// jsonGot says what json.UnmarshalTypeError.Value was: "a string", "1.5".
func jsonGot(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "a boolean"
	}
	return "a " + v
}

// isInteger reports whether a JSON number is written as an integer.
func isInteger(n string) bool {
	n = strings.TrimPrefix(n, "-")
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return n != ""
}

// stripIndexes turns "records[2].value" into "records.value", the way
// json.UnmarshalTypeError names a field.
func stripIndexes(at string) string {
	var b strings.Builder
	depth := 0
	for _, c := range at {
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// noBody refuses a request body on an endpoint that takes none.
func (a *API) noBody(w http.ResponseWriter, r *http.Request) *apiError {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if ae := a.limitBody(w, r); ae != nil {
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
		return "", badRequest("invalid %s %s: 1 to %d characters of A-Z a-z 0-9 . _ -, not . or ..", what, quoted(v), topic.MaxNameLength)
	}
	return v, nil
}

// partitionParam returns the {p} path wildcard: a decimal partition index.
func partitionParam(r *http.Request) (int, *apiError) {
	v := r.PathValue("p")
	n, ok := parseIndex(v, 0)
	if !ok {
		return 0, badRequest("invalid partition %s: a decimal integer from 0", quoted(v))
	}
	return n, nil
}

// brokerParam returns a broker id path wildcard: a decimal integer >= 1.
func brokerParam(r *http.Request, key string) (int, *apiError) {
	v := r.PathValue(key)
	n, ok := parseIndex(v, 1)
	if !ok {
		return 0, badRequest("invalid broker id %s: a decimal integer from 1", quoted(v))
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
			return nil, badRequest("unknown query parameter %s; allowed: %s", quoted(k), strings.Join(allowed, ", "))
		}
		if len(vs) != 1 {
			return nil, badRequest("query parameter %s given %d times", quoted(k), len(vs))
		}
		out[k] = vs[0]
	}
	return out, nil
}
