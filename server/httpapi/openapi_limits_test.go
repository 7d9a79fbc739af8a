package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apitest"
)

// The limits test reads the served /openapi.json and, for every limit a
// request parameter or a JSON request body states, sends one request that
// breaks that limit alone and expects 400 invalid_argument. A limit added
// to a schema is tested without a word here; a keyword this walker does not
// know fails the test (limitKeywords), so it cannot be skipped silently.

// limitKeywords are the schema keywords the walker understands: the
// constraints it breaks, and the rest, which state no limit a request can
// break on its own.
var limitKeywords = map[string]bool{
	// constraints
	"minimum": true, "maximum": true, "minLength": true, "maxLength": true, "pattern": true,
	"minItems": true, "required": true, "additionalProperties": true,
	// structure and words
	"$ref": true, "type": true, "format": true, "description": true, "properties": true,
	"items": true, "anyOf": true, "enum": true, "example": true,
}

// limitCase is one request that breaks one stated limit.
type limitCase struct {
	name   string
	method string
	target string
	ctype  string
	body   []byte
	status int // 400, or 404 for a path segment the router refuses first
}

// patternCandidates are strings tried against every stated pattern; each
// one the pattern refuses (within the stated lengths) is sent.
var patternCandidates = []string{"a b", "é", "!", "a/b", ".", "..", "a=", "abc", "====", "a\tb", "*"}

// limitGen builds the cases of one document.
type limitGen struct {
	t     *testing.T
	doc   map[string]any
	cases []limitCase
}

// resolve follows a $ref into the components.
func (g *limitGen) resolve(sch map[string]any) map[string]any {
	for {
		r, ok := sch["$ref"].(string)
		if !ok {
			return sch
		}
		name := strings.TrimPrefix(r, "#/components/schemas/")
		sch = g.doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	}
}

// checkKeywords fails on a keyword the walker does not know.
func (g *limitGen) checkKeywords(sch map[string]any, at string) {
	for k := range sch {
		if !limitKeywords[k] {
			g.t.Errorf("%s: schema keyword %q is not known to the limits test; teach openapi_limits_test.go to break it", at, k)
		}
	}
}

// bound returns a schema's numeric keyword as a big integer.
func bound(sch map[string]any, key string) (*big.Int, bool) {
	v, ok := sch[key]
	if !ok {
		return nil, false
	}
	n, ok := new(big.Int).SetString(fmt.Sprint(v.(json.Number)), 10)
	return n, ok
}

// violations returns, for a scalar schema, the values that break one of
// its limits each, by name. Integers come back as decimal strings.
func (g *limitGen) violations(sch map[string]any, at string) map[string]string {
	g.checkKeywords(sch, at)
	out := map[string]string{}
	if lo, ok := bound(sch, "minimum"); ok {
		out[fmt.Sprintf("below minimum %v", lo)] = new(big.Int).Sub(lo, big.NewInt(1)).String()
	}
	if hi, ok := bound(sch, "maximum"); ok {
		out[fmt.Sprintf("above maximum %v", hi)] = new(big.Int).Add(hi, big.NewInt(1)).String()
	}
	minLen, hasMin := bound(sch, "minLength")
	maxLen, hasMax := bound(sch, "maxLength")
	if hasMin && minLen.Sign() > 0 {
		out[fmt.Sprintf("shorter than minLength %v", minLen)] = strings.Repeat("a", int(minLen.Int64())-1)
	}
	if hasMax {
		out[fmt.Sprintf("longer than maxLength %v", maxLen)] = strings.Repeat("a", int(maxLen.Int64())+1)
	}
	if p, ok := sch["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		require.NoError(g.t, err, "%s: the pattern is RE2 too", at)
		for _, c := range patternCandidates {
			if re.MatchString(c) || (hasMin && int64(len(c)) < minLen.Int64()) || (hasMax && int64(len(c)) > maxLen.Int64()) {
				continue
			}
			out[fmt.Sprintf("%q against pattern", c)] = c
		}
	}
	return out
}

// fill puts the examples of the path parameters into path, value escaped,
// with the one named swap set to its value instead.
func fill(path string, params []any, swap, value string) string {
	for _, p := range params {
		p := p.(map[string]any)
		if p["in"] != "path" {
			continue
		}
		name := p["name"].(string)
		v := fmt.Sprint(p["example"])
		if name == swap {
			v = value
		}
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	return path
}

// operation adds the cases of one operation.
func (g *limitGen) operation(path, method string, op map[string]any) {
	id := op["operationId"].(string)
	params, _ := op["parameters"].([]any)
	base := limitCase{method: strings.ToUpper(method), target: fill(path, params, "", ""), status: http.StatusBadRequest}
	var example any
	var bodySchema map[string]any
	octet := false
	if rb, ok := op["requestBody"].(map[string]any); ok {
		content := rb["content"].(map[string]any)
		_, octet = content[mediaOctetStream]
		if m, ok := content[mediaJSON].(map[string]any); ok {
			example, bodySchema = m["example"], m["schema"].(map[string]any)
			base.ctype = mediaJSON
			base.body, _ = json.Marshal(example)
		}
	}
	// The unbroken request first: whatever it answers, it is not a 400,
	// so each case's 400 comes from the limit it breaks.
	g.cases = append(g.cases, limitCase{name: id + " as documented", method: base.method, target: base.target,
		ctype: base.ctype, body: base.body})

	for _, p := range params {
		p := p.(map[string]any)
		name, in := p["name"].(string), p["in"].(string)
		for what, v := range g.violations(p["schema"].(map[string]any), id+" "+name) {
			c := base
			c.name = fmt.Sprintf("%s %s parameter %s: %s", id, in, name, what)
			switch in {
			case "path":
				c.target = fill(path, params, name, v)
				if v == "" || v == "." || v == ".." {
					// An empty, "." or ".." segment never reaches a
					// route: the router refuses it (jsonFallbacks).
					c.status = http.StatusNotFound
				}
			case "query":
				c.target = base.target + "?" + url.Values{name: {v}}.Encode()
				if octet {
					// The query parameters of produce belong to the
					// octet-stream form.
					c.ctype, c.body = mediaOctetStream, []byte("x")
				}
			default:
				g.t.Fatalf("%s: parameter in %q", id, in)
			}
			g.cases = append(g.cases, c)
		}
	}
	if bodySchema != nil {
		g.body(base, id+" body", bodySchema, example, nil)
	}
}

// body adds the cases of the part of a JSON body at path (keys and
// indexes) whose schema is sch and whose example value is v.
func (g *limitGen) body(base limitCase, at string, sch map[string]any, v any, path []any) {
	sch = g.resolve(sch)
	g.checkKeywords(sch, at)
	// mutate adds a case whose body is the example with the value at path
	// replaced by what f makes of (a copy of) it.
	mutate := func(what string, f func(v any) any) {
		c := base
		c.name = at + ": " + what
		var doc any
		dec := json.NewDecoder(bytes.NewReader(base.body))
		dec.UseNumber()
		require.NoError(g.t, dec.Decode(&doc))
		doc = replaceAt(doc, path, f)
		var err error
		c.body, err = json.Marshal(doc)
		require.NoError(g.t, err)
		g.cases = append(g.cases, c)
	}
	set := func(value any) func(any) any { return func(any) any { return value } }
	switch sch["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		if sch["additionalProperties"] == false {
			mutate("an unknown property", func(v any) any {
				v.(map[string]any)["unexpected_field"] = 1
				return v
			})
		}
		required, _ := sch["required"].([]any)
		for _, r := range required {
			r := r.(string)
			if _, present := obj[r]; present {
				mutate(fmt.Sprintf("required %q missing", r), func(v any) any {
					delete(v.(map[string]any), r)
					return v
				})
			}
		}
		props, _ := sch["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if pv, ok := obj[k]; ok {
				g.body(base, at+"."+k, props[k].(map[string]any), pv, append(slices.Clone(path), k))
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return
		}
		if lo, ok := bound(sch, "minItems"); ok && lo.Sign() > 0 {
			mutate(fmt.Sprintf("fewer than minItems %v", lo), func(v any) any {
				return v.([]any)[:lo.Int64()-1]
			})
		}
		if items, ok := sch["items"].(map[string]any); ok && len(arr) > 0 {
			g.body(base, at+"[0]", items, arr[0], append(slices.Clone(path), 0))
		}
	case "integer", "string":
		for what, bad := range g.violations(sch, at) {
			value := any(bad)
			if sch["type"] == "integer" {
				value = json.Number(bad)
			}
			mutate(what, set(value))
		}
	case nil:
		// anyOf (a nullable key): no limit of its own to break.
		alts, ok := sch["anyOf"].([]any)
		if !ok {
			g.t.Errorf("%s: a schema without type or anyOf", at)
		}
		for _, alt := range alts {
			alt := g.resolve(alt.(map[string]any))
			g.checkKeywords(alt, at)
			for _, k := range []string{"minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "required", "additionalProperties"} {
				if _, ok := alt[k]; ok {
					g.t.Errorf("%s: %s inside anyOf is not broken by the limits test; teach it", at, k)
				}
			}
		}
	}
}

// replaceAt returns doc with the value at path (object keys and array
// indexes) replaced by f of it.
func replaceAt(doc any, path []any, f func(any) any) any {
	if len(path) == 0 {
		return f(doc)
	}
	switch k := path[0].(type) {
	case string:
		m := doc.(map[string]any)
		m[k] = replaceAt(m[k], path[1:], f)
	case int:
		a := doc.([]any)
		a[k] = replaceAt(a[k], path[1:], f)
	}
	return doc
}

// docs/phase-6-network-api.md § Documentation pages: every limit the
// document states for a request is one the server enforces. One request per
// stated limit (minimum, maximum, minLength, maxLength, pattern, minItems,
// required, additionalProperties: false), derived from /openapi.json, is
// answered 400 invalid_argument; the same request unbroken is not a 400.
func TestOpenAPILimitsEnforced(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	send := func(c limitCase) *http.Response {
		req := apitest.LocalRequest(c.method, c.target, bytes.NewReader(c.body))
		if strings.HasPrefix(c.target, "/api/events") && c.status == 0 {
			// The stream sent as documented goes on until its client
			// leaves: this one leaves after its first message.
			ctx, cancel := context.WithTimeout(req.Context(), 200*time.Millisecond)
			defer cancel()
			req = req.WithContext(ctx)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Result()
	}
	// The examples name topic orders, partition 0.
	resp := send(limitCase{method: http.MethodPost, target: "/api/topics", ctype: mediaJSON,
		body: []byte(`{"name":"orders","partitions":1,"replication_factor":2}`)})
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(s.openapi))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc))
	g := &limitGen{t: t, doc: doc}
	paths := doc["paths"].(map[string]any)
	for _, path := range sortedKeys(paths) {
		item := paths[path].(map[string]any)
		for _, method := range sortedKeys(item) {
			g.operation(path, method, item[method].(map[string]any))
		}
	}

	// Two rules of produce that no schema can state: its query parameters
	// belong to the octet-stream form, and key and key_b64 exclude each
	// other.
	g.cases = append(g.cases,
		limitCase{name: "produceRecords: key with a JSON body", method: http.MethodPost, target: "/api/topics/orders/records?key=k",
			ctype: mediaJSON, body: []byte(`{"records":[{"value":"eA=="}]}`), status: http.StatusBadRequest},
		limitCase{name: "produceRecords: key and key_b64", method: http.MethodPost, target: "/api/topics/orders/records?key=k&key_b64=aw==",
			ctype: mediaOctetStream, body: []byte("x"), status: http.StatusBadRequest},
	)

	broken := map[string]bool{}
	for _, c := range g.cases {
		resp := send(c)
		if c.status == 0 {
			require.NotEqual(t, http.StatusBadRequest, resp.StatusCode, "%s: %s %s %s", c.name, c.method, c.target, c.body)
			continue
		}
		require.Equal(t, c.status, resp.StatusCode, "%s: %s %s %s", c.name, c.method, c.target, c.body)
		if c.method != http.MethodHead {
			want := CodeInvalidArgument
			if c.status == http.StatusNotFound {
				want = CodeNotFound
			}
			require.Equal(t, want, apitest.DecodeError(t, resp).Code, c.name)
		}
		broken[c.name] = true
	}
	t.Logf("%d limits broken, %d operations sent as documented", len(broken), len(g.cases)-len(broken))

	// The limits the issue named are among them: if one of these goes, a
	// schema lost a limit.
	for _, name := range []string{
		"createTopic body.name: longer than maxLength 249",
		`createTopic body.name: "." against pattern`,
		"createTopic body.partitions: below minimum 1",
		"createTopic body.partitions: above maximum 1024",
		"createTopic body.replication_factor: below minimum 1",
		"createTopic body: an unknown property",
		"produceRecords body.records: fewer than minItems 1",
		"produceRecords body.records[0]: an unknown property",
		`produceRecords body.records[0]: required "value" missing`,
		`produceRecords query parameter key_b64: "abc" against pattern`,
		"fetchRecords query parameter offset: below minimum 0",
		"fetchRecords query parameter offset: above maximum 18446744073709551615",
		"fetchRecords query parameter max: below minimum 1",
		"headFetchRecords query parameter max: below minimum 1",
		"getJournal query parameter max: above maximum 1000",
		"commitConsumerOffset body.offset: above maximum 18446744073709551615",
		"resetConsumerOffset body: an unknown property",
		`getTopic path parameter topic: "a b" against pattern`,
		"listConsumerOffsets path parameter id: longer than maxLength 249",
		"catchUpReplica path parameter broker: below minimum 1",
		"fetchRecords path parameter p: above maximum 2147483647",
		"addClusterNode body.id: below minimum 1",
		"addClusterNode body.id: above maximum 64",
		`addClusterNode body.addr: "a b" against pattern`,
		"addClusterNode body: an unknown property",
		`addClusterNode body: required "addr" missing`,
		"removeClusterNode path parameter id: above maximum 64",
	} {
		require.True(t, broken[name], "no case %q", name)
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
