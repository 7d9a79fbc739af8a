package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// running is a server serving on a listener: a real loopback one, or
// one of an in-memory network (syncnodes_test.go).
type running struct {
	srv    *Server
	base   string
	hc     *http.Client
	client *apiclient.Client
	stop   func()
}

// startServer opens a server on dataDir with the given broker count and
// serves it on a free loopback port until the returned stop is called
// (t.Cleanup calls it too). stop shuts down gracefully and closes the
// cluster, as the binary does on SIGTERM.
func startServer(t *testing.T, dataDir string, brokers int, opts ...func(*Config)) *running {
	t.Helper()
	cfg := Defaults()
	cfg.DataDir = dataDir
	cfg.Brokers = BrokerCount(brokers)
	cfg.LogLevel = LogLevel(LevelError)
	cfg.KafkaPort = 0 // no fixed ports in tests; a test that speaks Kafka sets kafkaFreePorts
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg, NewLogger(io.Discard, cfg))
	require.NoError(t, err)
	return serveExisting(t, srv)
}

// manual is the manual mode of phase 5: the controller changes no
// metadata (PYSTREAM_FAILOVER_AFTER=0), so a test can stop, fail over and
// recover by hand.
func manual(c *Config) { c.FailoverAfter = 0 }

// serveExisting serves srv like startServer.
func serveExisting(t *testing.T, srv *Server) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return serveOn(t, srv, ln)
}

// serveOn serves srv on ln like startServer.
func serveOn(t *testing.T, srv *Server, ln net.Listener) *running {
	t.Helper()
	return serveVia(t, srv, ln, &http.Client{Transport: apiclient.NewTransport()})
}

// serveVia serves srv on ln like startServer, for clients that reach it
// through hc.
func serveVia(t *testing.T, srv *Server, ln net.Listener, hc *http.Client) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	r := &running{srv: srv, base: base, hc: hc, client: apiclient.New(base, apiclient.WithHTTPClient(hc))}
	stopped := false
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		// The client's idle connections close first: a connection the
		// transport dialed and never used is new to the server, and a
		// shutdown waits up to 5 s for a new connection to send its
		// request.
		hc.CloseIdleConnections()
		cancel()
		require.NoError(t, <-served)
		require.NoError(t, srv.Close())
	}
	t.Cleanup(r.stop)
	return r
}
