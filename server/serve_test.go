package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// listenLoopback opens a listener on a free loopback port.
func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}

// docs/phase-0-foundation.md § Start and stop: on shutdown the server
// finishes in-flight requests, then Serve returns nil.
func TestServeGracefulShutdown(t *testing.T) {
	s, logs := newTestServer(t, Defaults())
	entered := make(chan struct{})
	release := make(chan struct{})
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "finished")
	})

	ln := listenLoopback(t)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{string(b), err}
	}()

	<-entered
	cancel() // shutdown starts while the request is in flight
	select {
	case err := <-served:
		t.Fatalf("Serve returned before the in-flight request finished: %v", err)
	case <-time.After(50 * time.Millisecond):
		// Not a timing assertion: only gives Serve a chance to return
		// early if it were going to.
	}
	close(release)

	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, "finished", r.body)
	require.NoError(t, <-served)
	require.Contains(t, logs.String(), `"msg":"pystream-server listening"`)
	require.Contains(t, logs.String(), `"addr":"`+ln.Addr().String()+`"`)
	require.Contains(t, logs.String(), `"msg":"stopped"`)

	// New connections are refused after shutdown.
	_, err := net.Dial("tcp", ln.Addr().String())
	require.Error(t, err)
}

// docs/phase-0-foundation.md § Start and stop: an address in use is a clear
// error.
func TestServeAddressInUse(t *testing.T) {
	ln := listenLoopback(t)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	s, _ := newTestServer(t, withDefaults(func(c *Config) { c.Port = Port(port) }))
	err := s.ListenAndServe(t.Context())
	require.ErrorIs(t, err, syscall.EADDRINUSE)
}

// Serve against a real listener: the health check over TCP.
func TestServeHealthOverTCP(t *testing.T) {
	s, _ := newTestServer(t, Defaults())
	ln := listenLoopback(t)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/api/health")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.JSONEq(t, `{"status":"ok","service":"pystream"}`, string(body))

	cancel()
	require.NoError(t, <-served)
}
