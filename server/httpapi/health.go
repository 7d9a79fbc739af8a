package httpapi

import (
	"net/http"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
)

// HealthResponse is the body of GET /api/health.
type HealthResponse struct {
	// Status is always "ok": a server that answers is healthy.
	Status string `json:"status"`
	// Service is the configured PYSTREAM_APP_NAME.
	Service string `json:"service"`
}

func (a *API) healthRoute() route {
	return route{
		Method:  http.MethodGet,
		Path:    "/api/health",
		Handler: a.handleHealth,
		Role:    RoleOpen,
		Operation: &operation{
			OperationID: "getHealth",
			Summary:     "Check that the server is up",
			Description: "Answers 200 with the service name as long as the process serves HTTP.",
			Tags:        []string{"system"},
			Responses: map[string]response{
				"200": {
					Description: "The server is up.",
					Content:     jsonContent(ref("HealthResponse"), HealthResponse{Status: "ok", Service: "pystream"}),
				},
			},
		},
	}
}

// handleHealth answers GET /api/health.
func (a *API) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, HealthResponse{Status: "ok", Service: a.cfg.AppName})
}

func (a *API) readyRoute(sc *schemaSet) route {
	return route{
		Method:  http.MethodGet,
		Path:    "/api/ready",
		Handler: a.handleReady,
		Role:    RoleOpen,
		Operation: &operation{
			OperationID: "getReady",
			Summary:     "Check that every partition can be served",
			Description: "Answers 200 once the controller's first pass has opened every replica log and caught up " +
				"what a crash left behind, and while every partition has an available leader and every replica log " +
				"on an available broker is open; otherwise 503, code unavailable, with the reasons. " +
				"/api/health says only that the process serves HTTP.",
			Tags: []string{"system"},
			Responses: map[string]response{
				"200": okJSON("Every partition can be served.", sc.of(apiclient.ReadyResponse{}), apiclient.ReadyResponse{Status: "ready"}),
				"503": {
					Description: "Not ready; reasons lists why.",
					Content: jsonContent(ref("ErrorResponse"), ErrorResponse{Error: ErrorBody{Code: CodeUnavailable,
						Message: "not ready: orders/0: leader broker 1 is unavailable",
						Reasons: []string{"orders/0: leader broker 1 is unavailable"}}}),
				},
			},
		},
	}
}

// handleReady answers GET /api/ready.
func (a *API) handleReady(w http.ResponseWriter, r *http.Request) {
	ready, reasons := a.ops.Ready()
	if !ready {
		writeJSON(w, http.StatusServiceUnavailable, ErrorResponse{Error: ErrorBody{Code: CodeUnavailable,
			Message: "not ready: " + strings.Join(reasons, "; "), Reasons: reasons}})
		return
	}
	writeJSON(w, http.StatusOK, apiclient.ReadyResponse{Status: "ready"})
}
