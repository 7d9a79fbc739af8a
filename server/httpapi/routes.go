package httpapi

import (
	"fmt"
	"net/http"
	"path"
	"strings"
)

// APIVersion is the version of the HTTP API reported in the OpenAPI
// document.
const APIVersion = "0.1.0"

// route is one endpoint: a method, a ServeMux path pattern (with {name}
// wildcards), its handler, the role a token needs to call it (auth.go;
// New refuses a route without one) and its OpenAPI description.
type route struct {
	Method    string
	Path      string
	Handler   http.HandlerFunc
	Role      Role
	Operation *operation
	// TopicFree marks a route that reaches no topic's data and that a
	// token limited to topic prefixes may call all the same, with its
	// role: POST /api/producers, as Kafka's InitProducerId is checked by
	// role alone (docs/security.md § Authentication and roles).
	TopicFree bool
}

// routeTable lists every endpoint the server answers. A new endpoint is one
// more entry here, with its handler in a file of its own and an Operation
// describing it; the mux and the OpenAPI document are both built from this
// table.
func (a *API) routeTable(sc *schemaSet) []route {
	routes := []route{a.healthRoute(), a.readyRoute(sc)}
	routes = append(routes, a.apiRoutes(sc)...)
	routes = append(routes, a.explorerRoutes(sc)...)
	routes = append(routes, a.metricsRoute(), a.openAPIRoute(), a.docsRoute())
	return append(routes, a.docPagesRoutes()...)
}

// apiInfo is the top of the OpenAPI document.
func apiInfo() info {
	return info{
		Title:   "PyStream",
		Version: APIVersion,
		Description: "A small Kafka-inspired event log written in Go. " +
			"Errors always answer with {\"error\": {\"code\", \"message\"}}.",
	}
}

// apiTags are the groups of the documentation page, in display order.
func apiTags() []tag {
	return []tag{
		{Name: "system", Description: "Liveness, readiness and metrics of the server."},
		{Name: "cluster", Description: "Brokers: list them, stop one to stage a failure, start it again; the journal of every change; the nodes of a cluster-mode cluster: list, add, remove."},
		{Name: "topics", Description: "Create and inspect replicated topics."},
		{Name: "records", Description: "Produce records and fetch them, never past the high watermark."},
		{Name: "consumers", Description: "Durable consumer offsets: read, commit (never backwards), reset."},
		{Name: "groups", Description: "Consumer groups: members heartbeat and share a topic's partitions, the server assigns them; list, describe, delete."},
		{Name: "operations", Description: "Failover, catch-up, recovery and leader moves of partitions and replicas."},
		{Name: "documentation", Description: "This documentation, as a page and as an OpenAPI document; the explorer, which draws the cluster live."},
	}
}

// rootResponse is the body of GET /, which redirects to /docs.
type rootResponse struct {
	Docs     string `json:"docs"`
	Explorer string `json:"explorer"`
	OpenAPI  string `json:"openapi"`
	Health   string `json:"health"`
}

// jsonFallbacks answers, with the JSON error body, the requests that the mux
// itself would answer in plain text: an unknown path (404) and a known path
// with the wrong method (405, with the Allow header).
func jsonFallbacks(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cleanPath(r.URL.Path) {
			// The mux would redirect a path with "." or ".." segments
			// or double slashes (also when they arrive
			// percent-encoded, as %2e%2e) to its cleaned form. An API
			// has one spelling per resource: refuse instead of
			// redirecting, so that ".." never reaches a handler in any
			// form.
			writeError(w, http.StatusNotFound, CodeNotFound,
				fmt.Sprintf("no endpoint %s %s: paths must not contain empty, \".\" or \"..\" segments", clip(r.Method), clipMessage(r.URL.Path)))
			return
		}
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// The root is where a newcomer's browser lands: send it to
			// the documentation, and tell a curl user where that is.
			w.Header().Set("Location", "/docs")
			writeJSON(w, http.StatusFound, rootResponse{Docs: "/docs", Explorer: "/explorer", OpenAPI: "/openapi.json", Health: "/api/health"})
			return
		}
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// No pattern: the mux's own not-found or method-not-allowed
		// handler, or a redirect to a cleaned path. Find out which.
		c := &captured{header: make(http.Header)}
		h.ServeHTTP(c, r)
		switch c.status {
		case http.StatusNotFound:
			writeError(w, http.StatusNotFound, CodeNotFound,
				fmt.Sprintf("no endpoint %s %s", clip(r.Method), clipMessage(r.URL.Path)))
		case http.StatusMethodNotAllowed:
			allow := c.header.Get("Allow")
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed,
				fmt.Sprintf("method %s is not allowed on %s; allowed: %s", clip(r.Method), clipMessage(r.URL.Path), allow))
		default:
			c.replay(w)
		}
	})
}

// cleanPath reports whether p is already in the form ServeMux cleans paths
// to: rooted, no empty, "." or ".." segments.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// captured is an http.ResponseWriter that keeps a small answer in memory.
type captured struct {
	header http.Header
	status int
	body   []byte
}

func (c *captured) Header() http.Header { return c.header }

func (c *captured) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}

func (c *captured) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, b...)
	return len(b), nil
}

// replay sends the captured answer to w.
func (c *captured) replay(w http.ResponseWriter) {
	for k, v := range c.header {
		w.Header()[k] = v
	}
	if c.status == 0 {
		c.status = http.StatusOK
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(c.body) // the client going away is not our error
}
