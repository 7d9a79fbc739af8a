package httpapi

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// Label values of the HTTP metrics are bounded: a client inventing methods
// or paths cannot grow the registry.
func TestMetricsHTTPLabelsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	require.NoError(t, err)
	for _, method := range []string{"FOO", "BAR", "get"} {
		m.observeHTTP("", method, 405, 0)
	}
	m.observeHTTP("", http.MethodGet, 404, 0)
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != "pystream_http_requests_total" {
			continue
		}
		got := map[string]float64{}
		for _, mm := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mm.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["route"]+" "+labels["method"]+" "+labels["status"]] = mm.GetCounter().GetValue()
		}
		require.Equal(t, map[string]float64{"unmatched other 405": 3, "unmatched GET 404": 1}, got)
		return
	}
	t.Fatal("pystream_http_requests_total not exported")
}
