package httpapi

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/backend"
)

// replayingData is a backend's data whose metadata is not current while
// replay is set: a node of cluster mode that has just started.
type replayingData struct {
	*backend.Local
	replay *atomic.Bool
}

func (r replayingData) MetadataCurrent() bool { return !r.replay.Load() }

// TestNotReadyWhileMetadataReplays pins the rule
// (docs/phase-7-processes.md § Nothing answered before it is known):
// while the metadata is not known to be current, every route that answers
// from it is 503 not_ready with Retry-After — never a 404 for a topic
// that exists, never an empty list of offsets — and the routes that do
// not (health, readiness, the metadata group's membership, the
// documentation) answer as always; once current, the same requests are
// served.
func TestNotReadyWhileMetadataReplays(t *testing.T) {
	ts := openTestServer(t, defaults(), nil)
	require.NoError(t, ts.cl.CreateTopic("orders", 1, 1))
	require.NoError(t, ts.cl.CommitOffset("billing", "orders", 0, 0))
	var replay atomic.Bool
	replay.Store(true)
	data := replayingData{ts.local, &replay}
	cfg := ts.cfg
	cfg.Metrics = nil // a registry of its own
	api, err := New(cfg, Backend{Data: data, Admin: ts.local, Operator: ts.local})
	require.NoError(t, err)
	t.Cleanup(func() { _ = api.Close() })
	get := func(target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Host = "127.0.0.1"
		api.ServeHTTP(w, r)
		return w
	}
	for _, target := range []string{"/api/topics", "/api/topics/orders", "/api/topics/orders/partitions/0/records?offset=0",
		"/api/consumers/billing/offsets", "/api/groups", "/api/cluster", "/api/journal"} {
		w := get(target)
		require.Equal(t, http.StatusServiceUnavailable, w.Code, "%s: %s", target, w.Body)
		require.Contains(t, w.Body.String(), `"code":"not_ready"`, target)
		require.Equal(t, notReadyRetryAfter, w.Header().Get("Retry-After"), target)
	}
	for _, target := range []string{"/api/health", "/api/ready", "/openapi.json"} {
		require.Equal(t, http.StatusOK, get(target).Code, target)
	}
	replay.Store(false)
	w := get("/api/consumers/billing/offsets")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), `"offset":0`)
	require.Equal(t, http.StatusOK, get("/api/topics/orders").Code)
}
