package server

import "net/http"

// HealthResponse is the body of GET /api/health.
type HealthResponse struct {
	// Status is always "ok": a server that answers is healthy.
	Status string `json:"status"`
	// Service is the configured PYSTREAM_APP_NAME.
	Service string `json:"service"`
}

func (s *Server) healthRoute() route {
	return route{
		Method:  http.MethodGet,
		Path:    "/api/health",
		Handler: s.handleHealth,
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
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, HealthResponse{Status: "ok", Service: s.cfg.AppName})
}
