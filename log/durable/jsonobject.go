package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// ObjectError says why ObjectFields refused a metadata file.
type ObjectError struct {
	// Reason is what is wrong, in words: "not JSON", "duplicate field
	// \"name\"", ....
	Reason string
	// Err is the decoder's error, if any.
	Err error
}

func (e *ObjectError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *ObjectError) Unwrap() error { return e.Err }

// ObjectFields splits a small JSON metadata file (topic.meta, an offset
// file, ...) into its raw field values, strictly: exactly one JSON object,
// every key at most once, nothing but white space after it. Go's decoder
// alone would keep the last of two equal keys and ignore trailing data; a
// file PyStream wrote never has either, so their presence means the file is
// not what the reader thinks it is. The caller checks the fields' names and
// types. Failures are *ObjectError.
func ObjectFields(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, &ObjectError{Reason: "not JSON", Err: err}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &ObjectError{Reason: "not a JSON object"}
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &ObjectError{Reason: "not JSON", Err: err}
		}
		key, ok := tok.(string)
		if !ok {
			return nil, &ObjectError{Reason: "not a JSON object"}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, &ObjectError{Reason: "not JSON", Err: err}
		}
		if _, dup := fields[key]; dup {
			return nil, &ObjectError{Reason: fmt.Sprintf("duplicate field %q", key)}
		}
		fields[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, &ObjectError{Reason: "not JSON", Err: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &ObjectError{Reason: "data after the JSON object", Err: err}
	}
	return fields, nil
}

// UnknownField returns the first field name of fields, in sorted order, that
// is not among known, and whether there is one: a metadata reader refuses a
// field it does not know rather than ignore what a newer writer meant.
func UnknownField(fields map[string]json.RawMessage, known ...string) (string, bool) {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(known, name) {
			return name, true
		}
	}
	return "", false
}

// IsInteger reports whether raw is a JSON number written as a whole number:
// an optional minus and digits, no fraction or exponent (so not null, a
// string, 1.0 or 1e3). Range checks are the caller's.
func IsInteger(raw json.RawMessage) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
