package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apitest"
)

// docs/phase-0-foundation.md § HTTP: GET /api/health answers 200
// {"status":"ok","service":"<PYSTREAM_APP_NAME>"} as application/json.
func TestHTTPHealth(t *testing.T) {
	for _, name := range []string{"pystream", "orders-api"} {
		s, _ := newTestServer(t, withDefaults(func(c *testConfig) { c.AppName = name }))
		resp := do(t, s, http.MethodGet, "/api/health")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.JSONEq(t, `{"status":"ok","service":"`+name+`"}`, string(body))
		require.Equal(t, `{"status":"ok","service":"`+name+`"}`+"\n", string(body), "field order is status, service")
	}
}

func TestHTTPHealthHead(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	resp := do(t, s, http.MethodHead, "/api/health")
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// docs/phase-0-foundation.md § HTTP: unknown paths answer 404 with the JSON
// error body.
func TestHTTPNotFound(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	for _, target := range []string{"/nope", "/api", "/api/health/extra", "/API/HEALTH"} {
		resp := do(t, s, http.MethodGet, target)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, target)
		e := apitest.DecodeError(t, resp)
		require.Equal(t, CodeNotFound, e.Code)
		require.NotEmpty(t, e.Message)
	}
	// Unknown path with an unusual method is still "not found".
	resp := do(t, s, http.MethodDelete, "/nope")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, CodeNotFound, apitest.DecodeError(t, resp).Code)
}

// GET / sends a browser to /docs, and names it (and the OpenAPI document
// and health) in JSON for a curl user; other methods on / are not found.
func TestHTTPRootPointsToDocs(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	resp := do(t, s, http.MethodGet, "/")
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "/docs", resp.Header.Get("Location"))
	var body rootResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, rootResponse{Docs: "/docs", Explorer: "/explorer", OpenAPI: "/openapi.json", Health: "/api/health"}, body)
	resp = do(t, s, http.MethodPost, "/")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// docs/phase-0-foundation.md § HTTP: wrong methods answer 405 with the JSON
// error body, and the Allow header lists what is allowed.
func TestHTTPMethodNotAllowed(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	for _, target := range []string{"/api/health", "/openapi.json", "/docs"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			resp := do(t, s, method, target)
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, method+" "+target)
			require.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
			e := apitest.DecodeError(t, resp)
			require.Equal(t, CodeMethodNotAllowed, e.Code)
			require.NotEmpty(t, e.Message)
		}
	}
}

// A path the mux would clean (dot segments, double slashes, also
// percent-encoded) is refused with a JSON 404, never redirected: an API
// resource has one spelling, and ".." must not reach a handler in any form.
func TestHTTPUncleanPathRefused(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	for _, target := range []string{"/api/../api/health", "/api/./health", "//api/health", "/api/%2e%2e/api/health"} {
		resp := do(t, s, http.MethodGet, target)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, target)
		require.Empty(t, resp.Header.Get("Location"), target)
		require.Equal(t, CodeNotFound, apitest.DecodeError(t, resp).Code, target)
	}
}

// docs/phase-0-foundation.md § Logging: every request is logged with method,
// path, status, duration and request id, the id the answer's
// X-Request-Id header carries.
func TestHTTPRequestLog(t *testing.T) {
	s, logs := newTestServer(t, defaults())
	var ids []string
	for _, req := range []struct{ method, target string }{
		{http.MethodGet, "/api/health?x=1"}, {http.MethodPost, "/api/health"}, {http.MethodGet, "/missing"},
	} {
		ids = append(ids, do(t, s, req.method, req.target).Header.Get(RequestIDHeader))
	}

	type line struct {
		Level     string
		Msg       string
		Method    string
		Path      string
		Status    int
		Duration  *int64
		RequestID string `json:"request_id"`
	}
	var got []line
	for _, raw := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l line
		require.NoError(t, json.Unmarshal([]byte(raw), &l))
		require.Equal(t, "request", l.Msg)
		require.Equal(t, "INFO", l.Level)
		require.NotNil(t, l.Duration, "duration is logged")
		require.GreaterOrEqual(t, *l.Duration, int64(0))
		require.Equal(t, ids[len(got)], l.RequestID)
		l.Duration, l.RequestID = nil, ""
		got = append(got, l)
	}
	require.Equal(t, []line{
		{Level: "INFO", Msg: "request", Method: "GET", Path: "/api/health", Status: 200},
		{Level: "INFO", Msg: "request", Method: "POST", Path: "/api/health", Status: 405},
		{Level: "INFO", Msg: "request", Method: "GET", Path: "/missing", Status: 404},
	}, got)
}

// A handler that panics answers 500 with the JSON error body, and the panic
// is logged.
func TestHTTPPanicRecovered(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	h := observe(logger, testMetrics(t), "", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, apitest.LocalRequest(http.MethodGet, "/x", nil))
	resp := rec.Result()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	body := apitest.DecodeError(t, resp)
	require.Equal(t, CodeInternal, body.Code)
	require.Equal(t, "internal server error; the server log has the cause", body.Message)
	id := resp.Header.Get(RequestIDHeader)
	require.Equal(t, id, body.RequestID)
	require.Contains(t, apitest.LogLine(t, logs.String(), id, "handler panicked")["panic"], "boom")
	require.Equal(t, float64(500), apitest.LogLine(t, logs.String(), id, "request")["status"])
	require.NotContains(t, logs.String(), "request failed", "the panic's line is the error line")
}

// docs/phase-0-foundation.md § HTTP: GET /openapi.json is an OpenAPI 3.1
// document of every endpoint.
func TestHTTPOpenAPI(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	resp := do(t, s, http.MethodGet, "/openapi.json")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	var doc map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	require.Equal(t, "3.1.0", doc["openapi"])
	info := doc["info"].(map[string]any)
	require.NotEmpty(t, info["title"])
	require.NotEmpty(t, info["version"])

	paths := doc["paths"].(map[string]any)
	require.Len(t, s.routes, 45, "health, ready, 33 API routes, the explorer's 5, metrics, openapi, docs and the two of its pages")
	ids := map[string]bool{}
	for _, r := range s.routes {
		item, ok := paths[openAPIPath(r.Path)].(map[string]any)
		require.True(t, ok, "path %s documented", r.Path)
		op, ok := item[strings.ToLower(r.Method)].(map[string]any)
		require.True(t, ok, "%s %s documented", r.Method, r.Path)
		id := op["operationId"].(string)
		require.NotEmpty(t, id)
		require.False(t, ids[id], "operationId %s is unique", id)
		ids[id] = true
		require.NotEmpty(t, op["responses"])
	}

	// Every $ref points at a schema that exists.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				name := strings.TrimPrefix(r, "#/components/schemas/")
				require.Contains(t, schemas, name)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
}

// Every route has an Operation: an endpoint cannot be served undocumented.
func TestHTTPRoutesDocumented(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	for _, r := range s.routes {
		require.NotNil(t, r.Operation, "%s %s", r.Method, r.Path)
		require.NotNil(t, r.Handler, "%s %s", r.Method, r.Path)
	}
}

func TestHTTPOpenAPIPath(t *testing.T) {
	require.Equal(t, "/api/health", openAPIPath("/api/health"))
	require.Equal(t, "/topics/{name}", openAPIPath("/topics/{name}"))
	require.Equal(t, "/files/{path}", openAPIPath("/files/{path...}"))
	require.Equal(t, "/", openAPIPath("/{$}"))
}

// docs/phase-0-foundation.md § HTTP: GET /docs is an interactive page that
// works offline: it is served from the binary and refers to nothing outside
// this server.
func TestHTTPDocsPage(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	resp := do(t, s, http.MethodGet, "/docs")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "connect-src 'self'")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, docsPage, body)
	page := string(body)
	require.Contains(t, page, `fetch("openapi.json")`, "the page reads this server's document")
	for _, external := range []string{"http://", "https://", "//cdn", "src=\"//", "@import"} {
		require.NotContains(t, page, external, "no external asset")
	}
	require.NotContains(t, page, "<script src", "scripts are inline")
	require.NotContains(t, page, "<link", "styles are inline")
}

// Every operation documents the standard error body.
func TestHTTPOpenAPIDocumentsErrors(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	var doc document
	require.NoError(t, json.Unmarshal(s.openapi, &doc))
	for path, item := range doc.Paths {
		for method, op := range item {
			def, ok := op.Responses["default"]
			require.True(t, ok, "%s %s", method, path)
			if method == "head" {
				require.Empty(t, def.Content, "HEAD %s answers headers only", path)
				continue
			}
			require.Equal(t, "#/components/schemas/ErrorResponse", def.Content["application/json"].Schema.Ref)
		}
	}
	// The route table itself is not modified by building the document.
	for _, r := range s.routes {
		_, ok := r.Operation.Responses["default"]
		require.False(t, ok)
	}
}

// The error examples of /openapi.json are what the server answers: each is
// staged here and the answer's code and message compared word for word.
func TestHTTPOpenAPIErrorExamplesAreReal(t *testing.T) {
	cfg := defaults()
	cfg.FailoverAfter = 0 // nothing heals on its own while the test stages
	s, _ := newTestServer(t, cfg)
	send := func(method, target, ctype, body string) *http.Response {
		req := apitest.LocalRequest(method, target, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Result()
	}
	require.Equal(t, http.StatusCreated, send(http.MethodPost, "/api/topics", mediaJSON, `{"name":"orders","partitions":1,"replication_factor":3}`).StatusCode)
	staged := map[int]*http.Response{
		400: send(http.MethodPost, "/api/topics", mediaJSON, `{"name":"orders","partitons":1}`),
		404: send(http.MethodGet, "/api/topics/nope", "", ""),
		409: send(http.MethodPost, "/api/topics/orders/partitions/0/failover", "", ""),
		413: send(http.MethodPost, "/api/topics/orders/records", mediaOctetStream, strings.Repeat("x", 1<<20+1)),
		415: send(http.MethodPost, "/api/topics", "text/plain", "{}"),
	}
	require.Equal(t, http.StatusOK, send(http.MethodPost, "/api/brokers/1/stop", "", "").StatusCode)
	staged[503] = send(http.MethodPost, "/api/topics/orders/records", mediaOctetStream, "v")
	require.Len(t, staged, len(errorExamples), "every example staged")
	for status, resp := range staged {
		want := errorExamples[status]
		require.Equal(t, status, resp.StatusCode)
		got := apitest.DecodeError(t, resp)
		require.Equal(t, want[0], got.Code, "%d", status)
		require.Equal(t, want[1], got.Message, "%d", status)
	}
}
