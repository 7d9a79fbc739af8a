package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// validate checks a decoded JSON value against a schema of the OpenAPI
// document, for the keywords the document uses ($ref, type, required,
// properties, items, anyOf, enum, minimum, maximum, minLength, maxLength,
// pattern, minItems; every object is treated as closed). It returns the
// first mismatch, or nil.
func validate(doc map[string]any, schema map[string]any, v any, at string) error {
	if r, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		s, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: unresolved %s", at, r)
		}
		return validate(doc, s, v, at)
	}
	if alts, ok := schema["anyOf"].([]any); ok {
		var errs []string
		for _, alt := range alts {
			err := validate(doc, alt.(map[string]any), v, at)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: matches no alternative: %s", at, strings.Join(errs, "; "))
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			return fmt.Errorf("%s: %v not in %v", at, v, enum)
		}
	}
	switch typ, _ := schema["type"].(string); typ {
	case "":
		return nil
	case "null":
		if v != nil {
			return fmt.Errorf("%s: %v is not null", at, v)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: %v (%T) is not a string", at, v, v)
		}
		n := float64(utf8.RuneCountInString(str))
		if lo, ok := schema["minLength"].(float64); ok && n < lo {
			return fmt.Errorf("%s: %q shorter than minLength %v", at, str, lo)
		}
		if hi, ok := schema["maxLength"].(float64); ok && n > hi {
			return fmt.Errorf("%s: %q longer than maxLength %v", at, str, hi)
		}
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			return fmt.Errorf("%s: %q does not match %s", at, str, p)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v is not a boolean", at, v)
		}
	case "integer", "number":
		n, ok := v.(float64)
		if !ok || (typ == "integer" && n != math.Trunc(n)) {
			return fmt.Errorf("%s: %v (%T) is not an %s", at, v, v, typ)
		}
		if lo, ok := schema["minimum"].(float64); ok && n < lo {
			return fmt.Errorf("%s: %v below minimum %v", at, n, lo)
		}
		if hi, ok := schema["maximum"].(float64); ok && n > hi {
			return fmt.Errorf("%s: %v above maximum %v", at, n, hi)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an array", at, v)
		}
		if lo, ok := schema["minItems"].(float64); ok && float64(len(arr)) < lo {
			return fmt.Errorf("%s: %d items, fewer than minItems %v", at, len(arr), lo)
		}
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range arr {
				if err := validate(doc, items, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an object", at, v)
		}
		required, _ := schema["required"].([]any)
		for _, r := range required {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: required %q missing", at, r)
			}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, e := range obj {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if props != nil {
					return fmt.Errorf("%s: property %q not described", at, k)
				}
				continue
			}
			if err := validate(doc, ps, e, at+"."+k); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: unknown type %q", at, typ)
	}
	return nil
}

func decodeAny(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

// docs/phase-0-foundation.md § HTTP: /openapi.json documents every endpoint,
// and what it says must be true of the wire: every example in the document
// matches its own schema, and the answers the contract
// (docs/phase-6-network-api.md) defines match the schemas of their
// operations.
func TestHTTPOpenAPIExamplesMatchSchemas(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	var doc map[string]any
	require.NoError(t, json.Unmarshal(s.openapi, &doc))

	checked := 0
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			op := op.(map[string]any)
			where := strings.ToUpper(method) + " " + path
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				if ex, ok := p["example"]; ok {
					require.NoError(t, validate(doc, p["schema"].(map[string]any), ex, where+" parameter "+p["name"].(string)))
					checked++
				}
			}
			var contents []any
			if rb, ok := op["requestBody"].(map[string]any); ok {
				contents = append(contents, rb["content"])
			}
			for _, resp := range op["responses"].(map[string]any) {
				if c, ok := resp.(map[string]any)["content"]; ok {
					contents = append(contents, c)
				}
			}
			for _, c := range contents {
				for mt, m := range c.(map[string]any) {
					m := m.(map[string]any)
					if ex, ok := m["example"]; ok && mt == "application/json" {
						require.NoError(t, validate(doc, m["schema"].(map[string]any), ex, where+" example"))
						checked++
					}
				}
			}
		}
	}
	require.Greater(t, checked, 40)

	// Bodies the contract defines, checked against their operations'
	// schemas.
	op := func(path, method string) map[string]any {
		return doc["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
	}
	reqSchema := func(o map[string]any) map[string]any {
		return o["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	}
	respSchema := func(o map[string]any, status string) map[string]any {
		return o["responses"].(map[string]any)[status].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	}
	produce := op("/api/topics/{topic}/records", "post")
	for _, body := range []string{
		`{"records":[{"value":"aGVsbG8="}]}`,            // key omitted
		`{"records":[{"key":null,"value":"aGVsbG8="}]}`, // key null
		`{"records":[{"key":"","value":""}]}`,           // empty key and value
	} {
		require.NoError(t, validate(doc, reqSchema(produce), decodeAny(t, body), "produce request "+body))
	}
	failed := `{"error":{"code":"unavailable","message":"m","broker_ids":[1],"records":[
		{"partition":0,"offset":5,"timestamp":1000001,"timestamp_ms":1,"leader":2,"brokers":[2,3]},
		{"error":{"code":"unavailable","message":"m"}}]}}`
	require.NoError(t, validate(doc, respSchema(produce, "503"), decodeAny(t, failed), "failed produce"))
	require.Error(t, validate(doc, respSchema(produce, "200"), decodeAny(t, `{"records":[{"error":{"code":"x","message":"m"}}]}`), "success"),
		"a successful produce answers placements only")
}
