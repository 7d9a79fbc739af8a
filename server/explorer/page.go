package explorer

import (
	"embed"
	"net/http"
	"path"
	"strings"
)

// web holds the page: plain HTML, CSS and JavaScript modules, no build
// step and nothing fetched from elsewhere, so it works offline.
//
//go:embed web
var web embed.FS

// CSP keeps the page to its own files and this server: scripts and styles
// from its own files only (no inline code), requests to this server only.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// contentTypes are the types of the page's files, by extension.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// ServePage answers GET /explorer: the page.
func (e *Explorer) ServePage(w http.ResponseWriter, r *http.Request) {
	serveFile(w, r, "index.html")
}

// ServeFile answers GET /explorer/{file}: one of the page's files, by
// the name in the request's {file} path value. An unknown name is 404.
func (e *Explorer) ServeFile(w http.ResponseWriter, r *http.Request) {
	serveFile(w, r, r.PathValue("file"))
}

// HasFile reports whether name is one of the page's files.
func HasFile(name string) bool {
	if name == "" || strings.ContainsAny(name, "/\\") || contentTypes[path.Ext(name)] == "" {
		return false
	}
	_, err := web.ReadFile("web/" + name)
	return err == nil
}

func serveFile(w http.ResponseWriter, r *http.Request, name string) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if !HasFile(name) {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such file of the explorer"}}` + "\n"))
		return
	}
	body, _ := web.ReadFile("web/" + name) // HasFile read it
	h.Set("Content-Type", contentTypes[path.Ext(name)])
	h.Set("Content-Security-Policy", CSP)
	h.Set("Cache-Control", "no-cache")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	_, _ = w.Write(body) // the client going away is not our error
}

// Handler serves the page, its files and the events stream on their own
// paths (GET /explorer, /explorer/{file}, /api/events), for a program that
// embeds the explorer without the server's route table. The server mounts
// the methods one by one instead, each behind its role.
func (e *Explorer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /explorer", e.ServePage)
	mux.HandleFunc("GET /explorer/{file}", e.ServeFile)
	mux.HandleFunc("GET /api/events", e.ServeEvents)
	return mux
}
