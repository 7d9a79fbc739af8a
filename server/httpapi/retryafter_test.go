package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
)

// docs/phase-7-processes.md § Faults and deadlines: a client of a leader
// that stopped answering is told, retriably, 503 unavailable with
// Retry-After and the partition and leader named; a 503 that chose its own
// Retry-After keeps it; any other status has none.
func TestUnavailableAnswerSaysWhenToRetry(t *testing.T) {
	lu := &cluster.LeaderUnavailableError{Topic: "orders", Partition: 2, BrokerID: 3,
		Err: fmt.Errorf("node does not answer: %w", cluster.ErrBrokerUnavailable)}
	w := httptest.NewRecorder()
	writeAPIError(w, classify(lu))
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	require.Equal(t, unavailableRetryAfter, w.Header().Get("Retry-After"))
	require.Contains(t, w.Body.String(), `"code":"unavailable"`)
	require.Contains(t, w.Body.String(), "orders/2: leader broker 3 is unavailable")

	w = httptest.NewRecorder()
	w.Header().Set("Retry-After", "5")
	writeAPIError(w, classify(lu))
	require.Equal(t, "5", w.Header().Get("Retry-After"))

	w = httptest.NewRecorder()
	writeAPIError(w, badRequest("no"))
	require.Empty(t, w.Header().Get("Retry-After"))
}
