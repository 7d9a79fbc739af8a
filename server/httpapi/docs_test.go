package httpapi

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/server/docpages"
)

// The documentation pages are served from the binary, open like /docs,
// under a CSP without script; /docs links to them; a name that is no
// page is a JSON 404 like every unknown resource.
func TestDocPagesServed(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	resp := do(t, s, http.MethodGet, "/docs/pages/phase-5-failover"+".md")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, docpages.CSP, resp.Header.Get("Content-Security-Policy"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `id="candidate-selection-and-safety-checks"`)

	resp = do(t, s, http.MethodGet, "/docs/pages")
	require.Equal(t, http.StatusOK, resp.StatusCode)

	resp = do(t, s, http.MethodGet, "/docs/pages/nope")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, apiclient.CodeNotFound, apitest.DecodeError(t, resp).Code)

	resp = do(t, s, http.MethodGet, "/docs")
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `href="docs/pages"`)
}
