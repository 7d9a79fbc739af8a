// Package httpapi is PyStream's HTTP API (docs/phase-6-network-api.md): the
// routes, their handlers, the request and answer shapes, the OpenAPI
// document and the /docs page, the explorer's routes, and everything
// around a request — middleware, authentication, the browser rules and the
// limits. New builds it over a Backend (package server/backend's
// interfaces); the API is an http.Handler. It never imports the server
// that wires it (package server reads the configuration, listens, serves
// TLS and shuts down) nor the Kafka listener beside it.
//
// # Routes
//
// Every endpoint is one entry of the route table (routes.go,
// api_routes.go): method, path, handler, the role a token needs, and its
// OpenAPI Operation. The mux and the OpenAPI 3.1 document at GET
// /openapi.json are both built from that table, so an endpoint cannot
// exist undocumented. GET /docs serves a page embedded in the binary that
// renders the document and sends requests from the browser; it loads
// nothing from elsewhere and works offline. Handlers live one group to a
// file (api_topics.go, api_produce.go, api_fetch.go, ...).
//
// # One API, two modes
//
// The handlers know only the Backend's interfaces — Data, TopicAdmin,
// Operator, and Membership for a cluster of processes — and never ask
// which mode serves them. What differs is chosen once by the wiring: the
// Brokers rule (EmbeddedBrokers: PYSTREAM_BROKERS, logical brokers that an
// operator stops and starts; ProcessBrokers: one broker per process), a
// Membership or none (the embedded cluster lists no nodes and refuses to
// add one), and a Groups.Home that says which node coordinates consumer
// groups. An operation a mode does not offer comes back from the backend
// as an error wrapping backend.ErrNotInThisMode, answered 409 with its own
// text.
//
// # Errors
//
// Every error answers with one JSON shape, ErrorResponse:
//
//	{"error": {"code": "not_found", "message": "no endpoint GET /nope", "request_id": "4f1c9a0e2b7d3865"}}
//
// including the 404 and 405 answers the mux would otherwise write as plain
// text (405 keeps its Allow header). classify (apierror.go) maps the
// libraries' typed errors and backend's sentinels to a status, a code and
// a message in PyStream's terms — which topic, partition, broker or offset
// — never an error chain or a path of the data directory (errtext.go names
// files for what they are); the whole error goes to the log with the
// request id (middleware.go).
//
// # Security and limits
//
// Every route names the role a bearer token needs (auth.go; the auth
// file and the rule of who may do what are server/auth's); without tokens every route is open, which
// the server allows on a loopback address only. browser.go refuses what a
// web page could send (cross-origin requests, foreign Host headers, form
// posts) and sets the pages' Content-Security-Policy. limits.go bounds
// every request's memory and the bytes in flight. See docs/security.md.
//
// # Adding an endpoint
//
// Write the handler as a method of *API in a file of its own, describe it
// with an Operation (shared schemas go in openAPIComponents), add its route
// to routeTable with its role, answer errors with writeAPIError (classify
// for a library's error), and test it through the API with httptest.
package httpapi
