package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The client commands are tested against the real server: its binary is
// built from ../../../server once per test run and started on a free
// loopback port with a fresh data directory.

var (
	serverOnce sync.Once
	serverBin  string
	serverErr  error
)

// buildServer builds pystream-server into the test's temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	serverOnce.Do(func() {
		serverBin = filepath.Join(filepath.Dir(pystreamBin), "pystream-server")
		build := exec.Command(goTool(), "build", "-o", serverBin, "./cmd/pystream-server")
		build.Dir = filepath.Join("..", "..", "..", "server")
		out, err := build.CombinedOutput()
		if err != nil {
			serverErr = fmt.Errorf("build pystream-server: %v\n%s", err, out)
		}
	})
	require.NoError(t, serverErr)
	return serverBin
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// startServer runs a server with brokers brokers, and any extra PYSTREAM_*
// variables, and returns its URL. It is stopped (SIGTERM, then waited for)
// when the test ends.
func startServer(t *testing.T, brokers int, env ...string) string {
	t.Helper()
	url, _ := startServerDir(t, brokers, env...)
	return url
}

// startServerDir is startServer that also returns the server's data
// directory.
func startServerDir(t *testing.T, brokers int, env ...string) (url, dataDir string) {
	t.Helper()
	dir := t.TempDir()
	url, _ = startServerAt(t, dir, freePort(t), brokers, env...)
	return url, filepath.Join(dir, "data")
}

// startServerAt runs a server in dir (its data directory dir/data, its log
// dir/server.log) on port, waits until it is healthy, and returns its URL
// and a function that stops it (SIGTERM, then waits). It is stopped when
// the test ends if it is still running.
func startServerAt(t *testing.T, dir string, port, brokers int, env ...string) (url string, stop func()) {
	t.Helper()
	bin := buildServer(t)
	cmd := exec.Command(bin)
	cmd.Dir = dir // no stray .env
	cmd.Env = append(os.Environ(),
		"PYSTREAM_HOST=127.0.0.1",
		fmt.Sprintf("PYSTREAM_PORT=%d", port),
		"PYSTREAM_DATA_DIR="+filepath.Join(dir, "data"),
		fmt.Sprintf("PYSTREAM_BROKERS=%d", brokers),
		"PYSTREAM_LOG_LEVEL=ERROR",
		// No Kafka listener unless a test asks for one on a free port:
		// tests never bind the default 9092.
		"PYSTREAM_KAFKA_PORT=0",
	)
	cmd.Env = append(cmd.Env, env...)
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
			_ = logFile.Close()
		})
	}
	t.Cleanup(stop)

	url = fmt.Sprintf("%s://127.0.0.1:%d", serverScheme(env), port)
	hc := healthClient(t, env) // tls_test.go
	// Wait for /api/health: bounded, and failing at once if the server
	// exits.
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("server exited before it was healthy: %v\n%s", err, log)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/health", nil)
		resp, err := hc.Do(req)
		cancel()
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, stop
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("server not healthy after 15s: %v\n%s", err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
