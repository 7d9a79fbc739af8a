package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apitest"
)

// The probe of docs/security.md § Browser-borne requests: a page on
// evil.example posts an empty form to /api/brokers/3/stop. It used to
// answer 200 and stop the broker; now it is refused and broker 3 is up.
func TestBrowserCrossOriginFormPostRefused(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	for _, tt := range []struct {
		origin, ctype string
	}{
		{"http://evil.example", "application/x-www-form-urlencoded"},
		{"http://evil.example", "multipart/form-data; boundary=x"},
		{"http://evil.example", "text/plain"},
		{"http://evil.example", ""},
		{"null", ""},
		{"", "application/x-www-form-urlencoded"}, // no Origin: still not a program's type
	} {
		r := apitest.LocalRequest(http.MethodPost, "/api/brokers/3/stop", strings.NewReader(""))
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if tt.ctype != "" {
			r.Header.Set("Content-Type", tt.ctype)
		}
		rec := serve(s, r)
		require.Contains(t, []int{http.StatusForbidden, http.StatusUnsupportedMediaType}, rec.Code, "%+v: %s", tt, rec.Body)
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"))
	}
	for _, b := range s.Cluster().Brokers() {
		require.True(t, b.Available, "broker %d still up", b.ID)
	}
}

// Every body-less state-changing route refuses a form's types, and every
// route with a body refuses them too (its own 415), with no token needed
// to find out: none of them is a 2xx.
func TestBrowserFormTypesRefusedEverywhere(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	require.NoError(t, s.Cluster().CreateTopic("orders", 1, 2))
	for _, rt := range s.routes {
		if !stateChanging(rt.Method) {
			continue
		}
		for _, ct := range []string{"application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain"} {
			r := routeRequest(rt, "orders", "")
			r.Header.Set("Content-Type", ct)
			r.Header.Del(IntentHeader)
			rec := serve(s, r)
			require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, "%s %s with %s: %s", rt.Method, rt.Path, ct, rec.Body)
		}
	}
}

// A program (curl, the CLI) sends a body-less POST with no Content-Type
// and no Origin: allowed, as the README's curl tour does. A browser's
// body-less request must carry X-PyStream-Request, even same-origin (the
// /docs page sends it).
func TestBrowserBodylessIntent(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	post := func(headers map[string]string) int {
		r := apitest.LocalRequest(http.MethodPost, "/api/brokers/3/start", nil)
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		return serve(s, r).Code
	}
	require.Equal(t, http.StatusOK, post(nil), "curl")
	require.Equal(t, http.StatusOK, post(map[string]string{"Origin": "http://127.0.0.1:8000", IntentHeader: "1"}), "the /docs page")
	require.Equal(t, http.StatusOK, post(map[string]string{"Origin": "http://127.0.0.1:8000", "Content-Type": "application/json"}), "same origin, JSON")
	require.Equal(t, http.StatusForbidden, post(map[string]string{"Origin": "http://127.0.0.1:8000"}), "same origin, no intent")
	require.Equal(t, http.StatusForbidden, post(map[string]string{"Sec-Fetch-Site": "cross-site"}), "a browser without Origin")
	require.Equal(t, http.StatusForbidden, post(map[string]string{"Origin": "http://evil.example", IntentHeader: "1"}), "cross origin")
}

// DNS rebinding: evil.example re-pointed at 127.0.0.1 reaches a loopback
// server with Host: evil.example. Refused on every route, reads included;
// IP addresses, localhost, PYSTREAM_HOST and PYSTREAM_ALLOWED_HOSTS pass.
func TestBrowserForeignHost(t *testing.T) {
	cfg := defaults()
	cfg.AllowedHosts = []string{"pystream.internal"}
	s, _ := newTestServer(t, cfg)
	get := func(host string) *httptest.ResponseRecorder {
		r := apitest.LocalRequest(http.MethodGet, "/api/cluster", nil)
		r.Host = host
		return serve(s, r)
	}
	for _, h := range []string{"evil.example", "evil.example:8000", "127.0.0.1.evil.example", strings.Repeat("x", 300)} {
		rec := get(h)
		require.Equal(t, http.StatusForbidden, rec.Code, h)
		require.Equal(t, CodePermissionDenied, apitest.DecodeError(t, rec.Result()).Code)
		require.Less(t, rec.Body.Len(), 400, "a long Host is not echoed whole")
	}
	for _, h := range []string{"127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000", "app.localhost:8000",
		"10.1.2.3:8000", "pystream.internal:9000", ""} {
		require.Equal(t, http.StatusOK, get(h).Code, h)
	}
	stop := apitest.LocalRequest(http.MethodPost, "/api/brokers/3/stop", nil)
	stop.Host = "evil.example:8000"
	stop.Header.Set("Origin", "http://evil.example:8000") // its "same origin"
	stop.Header.Set(IntentHeader, "1")
	require.Equal(t, http.StatusForbidden, serve(s, stop).Code)
	require.True(t, s.Cluster().Brokers()[2].Available)

	cfg.AllowedHosts = []string{"*"}
	any, _ := newTestServer(t, cfg)
	r := apitest.LocalRequest(http.MethodGet, "/api/health", nil)
	r.Host = "whatever.example"
	require.Equal(t, http.StatusOK, serve(any, r).Code)
}

// OPTIONS answers 204 with Allow; CORS is off by default (no
// Access-Control-* for anyone), on for PYSTREAM_ALLOWED_ORIGINS only.
func TestBrowserOptionsAndCORS(t *testing.T) {
	cfg := defaults()
	cfg.AllowedOrigins = []string{"https://app.example.com"}
	s, _ := newTestServer(t, cfg)
	opts := func(path, origin string) *httptest.ResponseRecorder {
		r := apitest.LocalRequest(http.MethodOptions, path, nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
			r.Header.Set("Access-Control-Request-Method", "POST")
		}
		return serve(s, r)
	}
	rec := opts("/api/topics", "")
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, "GET, HEAD, POST, OPTIONS", rec.Header().Get("Allow"))
	require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"))

	rec = opts("/api/brokers/1/stop", "http://evil.example")
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"))

	rec = opts("/api/brokers/1/stop", "https://app.example.com")
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, "https://app.example.com", rec.Header().Get("Access-Control-Allow-Origin"))
	require.Equal(t, "POST, OPTIONS", rec.Header().Get("Access-Control-Allow-Methods"))
	require.Contains(t, rec.Header().Get("Access-Control-Allow-Headers"), "Authorization")
	require.Contains(t, rec.Header().Get("Vary"), "Origin")

	require.Equal(t, http.StatusNotFound, opts("/api/nothing", "").Code)

	// The allowed origin's real request gets its CORS header.
	r := apitest.LocalRequest(http.MethodGet, "/api/cluster", nil)
	r.Header.Set("Origin", "https://app.example.com")
	rec = serve(s, r)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "https://app.example.com", rec.Header().Get("Access-Control-Allow-Origin"))
}
