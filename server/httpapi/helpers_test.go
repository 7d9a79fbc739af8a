package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/controller"
	"github.com/pystream/pystream/server/group"
)

// The API's tests serve it over the embedded cluster as the server's
// wiring does (package server builds the same pieces from its
// configuration): logical brokers in a temporary directory, the
// controller loop, both group coordinators. End-to-end tests of the whole
// server — its configuration, Kafka listener, restarts, cluster mode —
// live in package server.

// testConfig is a test's server: the API's Config, and what the wiring
// would take from PYSTREAM_* variables.
type testConfig struct {
	Config
	// DataDir is the cluster's directory; "" is a fresh temporary one.
	DataDir string
	// Brokers are the logical brokers started, 1 to Brokers.
	Brokers int
	// FailoverAfter is the controller's failover delay (0: manual mode).
	FailoverAfter time.Duration
	// AuthFile, when set, is read into Config.Auth.
	AuthFile string
	// Cluster are the embedded cluster's options.
	Cluster cluster.Options
}

// testDefaultFailoverAfter is PYSTREAM_FAILOVER_AFTER's default.
const testDefaultFailoverAfter = 3 * time.Second

// defaults is the server's default configuration: three brokers,
// automatic healing after 3 s.
func defaults() testConfig {
	return testConfig{Config: Config{AppName: "pystream", Host: "127.0.0.1"}, Brokers: 3, FailoverAfter: testDefaultFailoverAfter}
}

// withDefaults is defaults, edited.
func withDefaults(edit func(*testConfig)) testConfig {
	cfg := defaults()
	edit(&cfg)
	return cfg
}

// testServer is the API over an embedded cluster, with the cluster.
type testServer struct {
	*API
	cl    *cluster.Cluster
	local *backend.Local
}

// Cluster is the embedded cluster.
func (s *testServer) Cluster() *cluster.Cluster { return s.cl }

// Handler is the API.
func (s *testServer) Handler() http.Handler { return s.API }

// openTestServer opens the cluster of cfg and builds the API over it,
// logging to logger; the test's cleanup closes both.
func openTestServer(t testing.TB, cfg testConfig, logger *slog.Logger) *testServer {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	c, err := cluster.OpenWithOptions(cfg.DataDir, cfg.Cluster)
	require.NoError(t, err)
	for id := 1; id <= cfg.Brokers; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	k, err := controller.New(c, controller.Config{FailoverAfter: cfg.FailoverAfter, Logger: logger})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.Run(ctx)
	}()
	local := &backend.Local{Cluster: c, Controller: k, FailoverAfter: cfg.FailoverAfter, DefaultFailoverAfter: testDefaultFailoverAfter}
	registry := group.NewRegistry()
	classic := group.NewClassicCoordinator(registry, group.ClassicConfig{Logger: logger})
	consumer := group.NewConsumerCoordinator(group.ConsumerConfig{Registry: registry, Topics: func(names []string) map[string]int32 {
		out := map[string]int32{}
		for _, n := range names {
			if info, err := c.Topic(n); err == nil {
				out[n] = int32(info.PartitionCount)
			}
		}
		return out
	}})
	if cfg.AuthFile != "" {
		toks, err := auth.LoadFile(cfg.AuthFile)
		require.NoError(t, err)
		cfg.Auth = auth.NewSet(toks)
	}
	cfg.Logger, cfg.Root = logger, c.Root()
	cfg.Config.Brokers = EmbeddedBrokers(cfg.Brokers)
	cfg.Groups = Groups{Registry: registry, Consumer: consumer, Classic: classic}
	api, err := New(cfg.Config, Backend{Data: local, Admin: local, Operator: local})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = api.Close()
		cancel()
		<-done
		classic.Close()
		consumer.Close()
		_ = c.Close() // some tests leave a log failed on purpose
	})
	return &testServer{API: api, cl: c, local: local}
}

// newTestServer builds a server for cfg whose log lines (JSON, from
// DEBUG) go to the returned buffer.
func newTestServer(t *testing.T, cfg testConfig) (*testServer, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	s := openTestServer(t, cfg, jsonLogger(&logs))
	logs.Reset() // start-up lines are not requests
	return s, &logs
}

// do sends one request through the server's handler.
func do(t *testing.T, s *testServer, method, target string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, apitest.LocalRequest(method, target, nil))
	return rec.Result()
}

// running is a server serving on a real loopback listener.
type running struct {
	srv    *testServer
	base   string
	client *apiclient.Client
	stop   func()
}

// startServer opens a server on dataDir with the given broker count and
// serves it on a free loopback port until the test ends, with the HTTP
// server's limits (MaxHeaderBytes).
func startServer(t *testing.T, dataDir string, brokers int, opts ...func(*testConfig)) *running {
	t.Helper()
	cfg := defaults()
	cfg.DataDir, cfg.Brokers = dataDir, brokers
	for _, o := range opts {
		o(&cfg)
	}
	return serveTest(t, openTestServer(t, cfg, slog.New(slog.DiscardHandler)))
}

// serveTest serves s like startServer.
func serveTest(t *testing.T, s *testServer) *running {
	t.Helper()
	hs := httptest.NewUnstartedServer(s.API)
	hs.Config.MaxHeaderBytes = MaxHeaderBytes
	hs.Start()
	hc := &http.Client{Transport: apiclient.NewTransport()}
	r := &running{srv: s, base: hs.URL, client: apiclient.New(hs.URL, apiclient.WithHTTPClient(hc))}
	stopped := false
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		hc.CloseIdleConnections()
		s.EndStreamsOf(hs.Config)
		hs.Close()
	}
	t.Cleanup(r.stop)
	return r
}

// jsonLogger logs JSON lines, from DEBUG, to w.
func jsonLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testMetrics are the API's metrics on a registry of their own.
func testMetrics(t testing.TB) *metrics {
	m, err := newMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	return m
}
