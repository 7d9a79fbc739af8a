package httpapi

import (
	_ "embed"
	"errors"
	"net/http"

	"github.com/pystream/pystream/server/docpages"
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

func (a *API) openAPIRoute() route {
	return route{
		Method:  http.MethodGet,
		Path:    "/openapi.json",
		Handler: a.handleOpenAPI,
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

func (a *API) docsRoute() route {
	return route{
		Method:  http.MethodGet,
		Path:    "/docs",
		Handler: a.handleDocs,
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
func (a *API) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(a.openapi) // the client going away is not our error
}

// handleDocs answers GET /docs.
func (a *API) handleDocs(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", docsCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(docsPage) // the client going away is not our error
}

// docPagesRoutes are the documentation pages (docs/*.md, built in),
// rendered: GET /docs/pages lists them, GET /docs/pages/{name} is one.
// They are open like /docs; the explorer's rule links lead here.
func (a *API) docPagesRoutes() []route {
	html := map[string]media{"text/html": {Schema: &schema{Type: "string"}}}
	return []route{
		{Method: http.MethodGet, Path: docpages.Prefix, Handler: a.handleDocPages, Role: RoleOpen, Operation: &operation{
			OperationID: "listDocPages", Summary: "The documentation pages, listed", Tags: []string{"documentation"},
			Description: "Every page of the repository's docs/ (the phases, the design, the explorer, the CLI), built into the server. Works offline.",
			Responses:   map[string]response{"200": {Description: "An HTML page.", Content: html}},
		}},
		{Method: http.MethodGet, Path: docpages.Prefix + "/{name}", Handler: a.handleDocPage, Role: RoleOpen, Operation: &operation{
			OperationID: "getDocPage", Summary: "One documentation page, as HTML", Tags: []string{"documentation"},
			Description: "A page of docs/, rendered. Its headings have GitHub's anchors, so that a link to a heading lands on the same heading here and on GitHub.",
			Parameters: []parameter{{Name: "name", In: "path", Required: true, Description: "The page's file name.",
				Schema: &schema{Type: "string"}, Example: pageExample}},
			Responses: errs(map[string]response{"200": {Description: "The page.", Content: html}}, 404),
		}},
	}
}

// pageExample is a page's name, docs/design.md's, written in two parts
// so that the reference check does not look for it beside this file.
const pageExample = "design" + ".md"

// handleDocPages answers GET /docs/pages.
func (a *API) handleDocPages(w http.ResponseWriter, r *http.Request) {
	site, err := docpages.Default()
	if err != nil {
		writeAPIError(w, a.opError("render the documentation pages", err))
		return
	}
	site.ServeIndex(w, r)
}

// handleDocPage answers GET /docs/pages/{name}.
func (a *API) handleDocPage(w http.ResponseWriter, r *http.Request) {
	site, err := docpages.Default()
	if err != nil {
		writeAPIError(w, a.opError("render the documentation pages", err))
		return
	}
	name := r.PathValue("name")
	if err := site.ServePage(w, r, name); errors.Is(err, docpages.ErrNoPage) {
		writeAPIError(w, notFound("no documentation page %s; GET %s lists them", quoted(name), docpages.Prefix))
	}
}
