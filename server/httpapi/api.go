package httpapi

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/explorer"
	"github.com/pystream/pystream/server/group"
)

// Backend is what the API serves, chosen once by the wiring: the
// embedded cluster (backend.Local, no Membership) or a node of a cluster
// of processes (server/nodebackend). The handlers know only these
// interfaces, so both modes answer every route alike.
type Backend struct {
	// Data, Admin and Operator are required.
	Data     backend.Data
	Admin    backend.TopicAdmin
	Operator backend.Operator
	// Membership is the metadata group of a cluster of processes; nil
	// for the embedded cluster, whose GET /api/cluster/nodes lists none
	// and which refuses to add or remove one.
	Membership backend.Membership
}

// Groups are the consumer groups the API serves (docs/groups.md): the
// registry that keeps each group to one protocol, the HTTP groups'
// coordinator, and Kafka's classic one, whose groups GET /api/groups
// lists too. The wiring shares them with the Kafka listener.
type Groups struct {
	// Registry and Consumer are required.
	Registry *group.Registry
	Consumer *group.ConsumerCoordinator
	// Classic is Kafka's coordinator; nil when there is none.
	Classic *group.ClassicCoordinator
	// Home says which node coordinates groups; nil is this server, as in
	// the embedded cluster (backend.HereHome).
	Home backend.GroupHome
}

// Config is the API's configuration. Zero fields take the defaults their
// comments name.
type Config struct {
	// Logger receives a line per failed request (with its cause) and
	// per change an operator makes; nil discards them.
	Logger *slog.Logger
	// Metrics is the server's registry: the API registers its own
	// metrics there (pystream_http_*, pystream_append*,
	// pystream_replication_failures_total) and serves the whole registry
	// at GET /metrics. Nil: a registry of the API's own.
	Metrics *prometheus.Registry
	// AppName is the service name GET /api/health answers
	// (PYSTREAM_APP_NAME).
	AppName string
	// Root is the data directory. No answer ever shows it: paths under
	// it are named for what they are, or relative to it.
	Root string
	// Brokers is how the configuration names the brokers
	// (EmbeddedBrokers or ProcessBrokers); nil is EmbeddedBrokers(0).
	Brokers Brokers
	// Groups are the consumer groups; required.
	Groups Groups
	// Advances is the server's "partition advanced" event; the
	// explorer's stream reads at once when it fires. Nil: the explorer
	// polls alone.
	Advances *backend.Hub

	// MaxRequestBytes caps a request body (PYSTREAM_MAX_REQUEST_BYTES,
	// DefaultMaxRequestBytes).
	MaxRequestBytes int64
	// MaxRequestRecords caps the records of a produce request
	// (PYSTREAM_MAX_REQUEST_RECORDS, DefaultMaxRequestRecords).
	MaxRequestRecords int
	// MaxInflightBytes bounds the request bodies being read at once
	// (PYSTREAM_MAX_INFLIGHT_BYTES, DefaultMaxInflightBytes).
	MaxInflightBytes int64
	// FetchMaxBytes caps a fetch's max_bytes (PYSTREAM_FETCH_MAX_BYTES,
	// MaxFetchBytes).
	FetchMaxBytes int
	// WriteTimeout is the HTTP server's write timeout: a group heartbeat
	// that asks to wait is answered within two thirds of it
	// (DefaultWriteTimeout).
	WriteTimeout time.Duration

	// Auth is the auth file (PYSTREAM_AUTH_FILE, server/auth): with it
	// every route but the open ones needs a bearer token with the
	// route's role. Nil opens every route, which
	// the wiring allows on a loopback address only.
	Auth *auth.Set
	// Host is the address the server binds (PYSTREAM_HOST); with
	// AllowedHosts and AllowedOrigins it decides which Host and Origin
	// headers a browser's request may carry (browser.go).
	Host           string
	AllowedHosts   []string
	AllowedOrigins []string
}

// DefaultWriteTimeout is Config.WriteTimeout's default: the server's.
const DefaultWriteTimeout = 30 * time.Second

// API is PyStream's HTTP API: the routes of routes.go behind request
// logging, metrics, authentication, the browser rules and JSON 404/405
// answers, over a Backend. It is an http.Handler, safe for concurrent
// use: handlers run concurrently, one goroutine per request, and share
// the backend, which is itself safe for concurrent use.
type API struct {
	cfg    Config
	logger *slog.Logger
	// data, admin, ops and members are the Backend's (members nil for
	// the embedded cluster); root is Config.Root.
	data    backend.Data
	admin   backend.TopicAdmin
	ops     backend.Operator
	members backend.Membership
	root    string
	brokers Brokers
	groups  Groups
	// maxBody, fetchBytes, maxRecords and writeTimeout are the limits of
	// Config with their defaults; inflight bounds the request bodies in
	// flight (admit). Tests lower them before serving.
	maxBody      int64
	fetchBytes   int
	maxRecords   int
	writeTimeout time.Duration
	inflight     *bounds.Inflight
	// auth is the parsed auth file; nil without one.
	auth    *auth.Set
	metrics *metrics
	// explorer serves /explorer and GET /api/events (explorer.go);
	// stopExplorerWatch ends its watch of Config.Advances.
	explorer          *explorer.Explorer
	stopExplorerWatch func()
	routes            []route
	openapi           []byte // the encoded OpenAPI document, built once
	handler           http.Handler
}

// New builds the API over b: its metrics on cfg.Metrics, the explorer,
// the route table, the OpenAPI document built from it, and the handler
// that serves them. Close it when the server has stopped serving.
func New(cfg Config, b Backend) (*API, error) {
	if b.Data == nil || b.Admin == nil || b.Operator == nil {
		return nil, errors.New("httpapi: the backend needs Data, Admin and Operator")
	}
	if cfg.Groups.Registry == nil || cfg.Groups.Consumer == nil {
		return nil, errors.New("httpapi: no consumer groups (Config.Groups)")
	}
	if cfg.Groups.Home == nil {
		cfg.Groups.Home = backend.HereHome{}
	}
	if cfg.Brokers == nil {
		cfg.Brokers = EmbeddedBrokers(0)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &API{cfg: cfg, logger: logger, data: b.Data, admin: b.Admin, ops: b.Operator, members: b.Membership,
		root: cfg.Root, brokers: cfg.Brokers, groups: cfg.Groups,
		maxBody:      cmp.Or(cfg.MaxRequestBytes, DefaultMaxRequestBytes),
		fetchBytes:   cmp.Or(cfg.FetchMaxBytes, MaxFetchBytes),
		maxRecords:   cmp.Or(cfg.MaxRequestRecords, DefaultMaxRequestRecords),
		writeTimeout: cmp.Or(cfg.WriteTimeout, DefaultWriteTimeout),
		inflight:     bounds.NewInflight(cmp.Or(cfg.MaxInflightBytes, DefaultMaxInflightBytes)),
	}
	a.auth = cfg.Auth
	m, err := newMetrics(cfg.Metrics)
	if err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	a.metrics = m
	if err := a.openExplorer(); err != nil {
		return nil, err
	}
	schemas := newSchemaSet()
	a.routes = a.routeTable(schemas)
	if err := checkRoles(a.routes); err != nil {
		return nil, errors.Join(err, a.Close())
	}
	doc := buildOpenAPI(apiInfo(), apiTags(), a.routes, schemas)
	if a.openapi, err = json.MarshalIndent(doc, "", "  "); err != nil {
		return nil, errors.Join(fmt.Errorf("httpapi: encode OpenAPI document: %w", err), a.Close())
	}
	mux := http.NewServeMux()
	for _, r := range a.routes {
		// The token is checked before the body's bytes are reserved
		// (admit): a caller without one cannot fill the in-flight budget.
		admitted := r
		admitted.Handler = a.admit(r.Handler).ServeHTTP
		if needsMetadata(r) {
			admitted.Handler = a.whenCurrent(admitted.Handler)
		}
		mux.Handle(r.Method+" "+r.Path, requireIntent(r, a.requireRole(admitted)))
	}
	a.handler = observe(logger, a.metrics, a.root, a.guardBrowser(mux, jsonFallbacks(mux)))
	return a, nil
}

// ServeHTTP answers one request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.handler.ServeHTTP(w, r) }

// EndStreamsOf ends the events streams srv serves, and refuses those it
// opens afterwards: a server shutting down calls it (its
// RegisterOnShutdown), so that its graceful shutdown waits for no stream.
func (a *API) EndStreamsOf(srv *http.Server) { a.explorer.EndStreamsOf(srv) }

// Close ends every events stream and stops the explorer. Call it after
// serving has stopped; closing twice is harmless. It returns nil: the
// error is for the Close of an io.Closer.
func (a *API) Close() error {
	if a.explorer != nil {
		a.explorer.Close()
	}
	if a.stopExplorerWatch != nil {
		a.stopExplorerWatch()
		a.stopExplorerWatch = nil
	}
	return nil
}

// metricsHandler serves the registry in the Prometheus text format.
func (a *API) metricsHandler() http.Handler {
	return promhttp.HandlerFor(a.cfg.Metrics, promhttp.HandlerOpts{})
}

// mode is the mode the API serves, as its answers name it.
func (a *API) mode() string {
	if a.members == nil {
		return apiclient.ModeEmbedded
	}
	return apiclient.ModeCluster
}
