package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// checkJSONKeys walks a JSON document that already decoded into a value of
// type t and refuses two things encoding/json lets through:
//
//   - a key repeated in one object: the decoder keeps the last one, so
//     {"records":[a],"records":[b]} would write b alone and drop a without
//     a word;
//   - a key spelled in another case than the field's JSON name: the decoder
//     matches "Value" or "OFFSET" to the field anyway, so a client could rely
//     on spellings the contract does not define.
//
// It is a pure function of the bytes and the type; the caller maps its
// error to a 400. Parts of the document that t does not describe (which a
// successful strict decode never leaves) are checked for repeated keys only.
func checkJSONKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkJSONKeys(dec, t, "")
}

// walkJSONKeys checks the next value of dec against t (nil: unknown). at
// names the value's position for messages ("records[1].value").
func walkJSONKeys(dec *json.Decoder, t reflect.Type, at string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar: nothing to check
	}
	switch delim {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkJSONKeys(dec, elem, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case '{':
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string) // object keys are always strings
			where := key
			if at != "" {
				where = at + "." + key
			}
			if seen[key] {
				return fmt.Errorf("key %s appears twice", quoted(where))
			}
			seen[key] = true
			var ft reflect.Type
			if fields != nil {
				if ft, ok = fields[key]; !ok {
					return fmt.Errorf("unknown key %s (keys are case-sensitive)", quoted(where))
				}
			}
			if err := walkJSONKeys(dec, ft, where); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing ']' or '}'
	return err
}

// jsonFields maps the exact JSON names of a struct's exported fields to
// their types, as encoding/json names them (the tag's name, else the Go
// field name; "-" skipped).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
