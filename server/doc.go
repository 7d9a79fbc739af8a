// Package server is PyStream's HTTP server: phase 0, the foundation every
// later phase plugs into, and (from phase 6) the network API over the
// library modules.
//
// # Configuration
//
// Config is read from PYSTREAM_* environment variables with envconfig, and
// from a .env file in the working directory when there is one; a variable
// in the real environment wins over the file. Load applies the rules and
// avoids envconfig's traps, each pinned by a test:
//
//   - multi-word fields are tagged split_words, so PYSTREAM_LOG_LEVEL is
//     read (envconfig alone would look for PYSTREAM_LOGLEVEL);
//   - no field has an envconfig:"NAME" tag, which would make envconfig fall
//     back to unprefixed HOST or PORT;
//   - integers are decimal and range-checked by our own Decode methods
//     (envconfig parses in base 0, where 010 is 8, and checks no range);
//   - an empty value counts as unset, so the default applies (envconfig
//     would store "" and an empty host means every interface);
//   - a PYSTREAM_* variable that nothing reads is returned so the binary
//     can warn about it, with the name it probably means.
//
// A rejected value is a *ConfigError naming the variable and what it
// allows; Usage prints the table of every variable.
//
// # Logging
//
// NewLogger is the only logging setup: log/slog, text lines on stderr (or
// JSON with PYSTREAM_LOG_FORMAT=json), the threshold from
// PYSTREAM_LOG_LEVEL, and the level names DEBUG, INFO, WARNING, ERROR and
// CRITICAL printed as configured (slog alone would print CRITICAL as
// "ERROR+4"). Each request is logged with method, path, status and
// duration. Library modules never log; they return errors and the server
// decides what to say.
//
// # HTTP
//
// Server uses the standard net/http ServeMux with method patterns. Every
// endpoint is one entry of the route table (routes.go): method, path,
// handler and its OpenAPI Operation. The mux and the OpenAPI 3.1 document at
// GET /openapi.json are both built from that table, so an endpoint cannot
// exist undocumented. GET /docs serves a documentation page embedded in the
// binary that renders the document and sends requests from the browser; it
// loads nothing from elsewhere and works offline.
//
// Errors always answer with one JSON shape, ErrorResponse:
//
//	{"error": {"code": "not_found", "message": "no endpoint GET /nope"}}
//
// including the 404 and 405 answers the mux would otherwise write as plain
// text (405 keeps its Allow header).
//
// # The controller
//
// New starts a controller (package server/controller) over the cluster: a
// loop that runs cluster.Plan on a tick and whenever a broker stops or
// starts or a write fails, and carries out its actions — catch-up, shrink of
// the active set, failover after PYSTREAM_FAILOVER_AFTER, recovery, and the
// move of leadership back to the preferred replica
// (PYSTREAM_LEADER_REBALANCE). GET /api/ready asks it whether every
// partition can be served. With PYSTREAM_FAILOVER_AFTER=0 it changes no
// metadata (phase 5's manual mode). See docs/design.md § The controller.
//
// # Security and limits
//
// Every route of the table names the role a bearer token needs (auth.go;
// PYSTREAM_AUTH_FILE), and without an auth file the server binds a
// loopback address only. browser.go refuses what a web page could send
// (cross-origin requests, foreign Host headers, form posts); tls.go serves
// HTTPS, with client certificates when PYSTREAM_TLS_CLIENT_CA is set;
// limits.go bounds every request's memory and the bytes in flight. See
// docs/security.md.
//
// # Lifecycle
//
// Main is the pystream-server command. It binds the address before it
// creates anything, opens the data directory, logs one start-up line (the
// address, Version, the data directory and the broker count), serves, and
// when its context is cancelled (SIGINT or SIGTERM in
// the binary) stops accepting connections, lets in-flight requests finish
// (up to ShutdownTimeout) and returns 0. Invalid configuration returns 2
// after the message and the usage table; a listen failure such as an
// address in use returns 1.
//
// # Adding an endpoint
//
// Write the handler as a method of *Server in a file of its own, describe it
// with an Operation (shared schemas go in openAPIComponents), add its route
// to routeTable, answer errors with writeError, and test it through
// Handler() with httptest.
package server
