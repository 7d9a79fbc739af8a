package server

import (
	_ "embed"
	"net/http"
)

// docsPage is the interactive documentation page. It is one self-contained
// HTML file (styles and script inline, no external assets), so the page
// works without network access: it reads /openapi.json from this server and
// sends "try it" requests to this server only.
//
//go:embed web/docs.html
var docsPage []byte

// docsCSP keeps the page from loading anything that is not part of it or of
// this server.
const docsCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"

func (s *Server) openAPIRoute() route {
	return route{
		Method:  http.MethodGet,
		Path:    "/openapi.json",
		Handler: s.handleOpenAPI,
		Role:    RoleOpen,
		Operation: &operation{
			OperationID: "getOpenAPI",
			Summary:     "This API as an OpenAPI 3.1 document",
			Tags:        []string{"documentation"},
			Responses: map[string]response{
				"200": {
					Description: "The OpenAPI document.",
					Content:     map[string]media{"application/json": {Schema: &schema{Type: "object"}}},
				},
			},
		},
	}
}

func (s *Server) docsRoute() route {
	return route{
		Method:  http.MethodGet,
		Path:    "/docs",
		Handler: s.handleDocs,
		Role:    RoleOpen,
		Operation: &operation{
			OperationID: "getDocs",
			Summary:     "Interactive documentation page",
			Description: "Lists every endpoint of /openapi.json and lets you send requests. Works offline: everything it needs is built into the server.",
			Tags:        []string{"documentation"},
			Responses: map[string]response{
				"200": {
					Description: "An HTML page.",
					Content:     map[string]media{"text/html": {Schema: &schema{Type: "string"}}},
				},
			},
		},
	}
}

// handleOpenAPI answers GET /openapi.json.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(s.openapi) // the client going away is not our error
}

// handleDocs answers GET /docs.
func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", docsCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(docsPage) // the client going away is not our error
}
