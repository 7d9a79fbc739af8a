package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/explorer"
)

// TestEventsPerTokenCap: docs/security.md § Bounds — with an auth file,
// the events streams are counted per token (the one requireRole put in
// the request's context): the reader's token holds
// explorer.DefaultMaxPerPrincipal streams, the next is refused with 503
// unavailable and Retry-After in the API's error format, and another
// token is still served.
func TestEventsPerTokenCap(t *testing.T) {
	r := startServer(t, t.TempDir(), 1, func(c *testConfig) { c.AuthFile = writeAuthFile(t) })
	open := func(token string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, r.base+"/api/events", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for i := range explorer.DefaultMaxPerPrincipal {
		require.Equal(t, http.StatusOK, open(tokenRead).StatusCode, "stream %d", i)
	}
	resp := open(tokenRead)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "5", resp.Header.Get("Retry-After"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var e apiclient.ErrorResponse
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	require.Equal(t, apiclient.CodeUnavailable, e.Error.Code)
	require.Contains(t, e.Error.Message, `token "reader"`)

	require.Equal(t, http.StatusOK, open(tokenWrite).StatusCode, "another token is served")
}
