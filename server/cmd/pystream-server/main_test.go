package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// These tests build the real binary and run it as a user would: as a
// separate process, over TCP, stopped with a signal.

// binDir holds the binary built once for the package's tests.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pystream-server-test-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var buildOnce struct {
	sync.Once
	out []byte
	err error
}

// buildBinary compiles pystream-server once per test run and returns its
// path.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(binDir, "pystream-server")
	buildOnce.Do(func() {
		buildOnce.out, buildOnce.err = exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	})
	require.NoError(t, buildOnce.err, "go build: %s", buildOnce.out)
	return bin
}

var buildCLIOnce struct {
	sync.Once
	out []byte
	err error
}

// buildCLI compiles the pystream CLI (tools/cmd/pystream, a module above
// this one, built through its own go.mod or the workspace) once per test
// run and returns its path.
func buildCLI(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(binDir, "pystream")
	buildCLIOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/pystream")
		cmd.Dir = filepath.Join("..", "..", "..", "tools")
		buildCLIOnce.out, buildCLIOnce.err = cmd.CombinedOutput()
	})
	require.NoError(t, buildCLIOnce.err, "go build pystream: %s", buildCLIOnce.out)
	return bin
}

// cliResult is what one run of the CLI printed, and its exit status.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the pystream CLI with args against server (a base URL, or ""
// for the file tools), stdin as its input, bounded by ctx.
func runCLI(t testing.TB, ctx context.Context, cli, server, stdin string, args ...string) cliResult {
	t.Helper()
	if server != "" {
		args = append([]string{"--server", server}, args...)
	}
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir}
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, "pystream %v", args)
	}
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// command prepares the binary with only the given PYSTREAM_* variables (and
// PATH), in an empty working directory so no .env is read. The Kafka
// listener is off unless env asks for one: tests never bind the default
// 9092.
func command(t testing.TB, ctx context.Context, bin string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "PYSTREAM_KAFKA_PORT=0"}, env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// exitCode waits for cmd and returns its exit status.
func exitCode(t testing.TB, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

// docs/phase-0-foundation.md § Start and stop: the binary logs one start-up
// line with the address, serves /api/health over TCP, and on SIGTERM exits 0.
func TestBinaryServesAndStopsOnSIGTERM(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	var (
		cmd    *exec.Cmd
		addr   string
		stderr io.ReadCloser
		lines  *bufio.Scanner
	)
	// The free port can be taken by someone else between freePort and the
	// binary's listen; try a few ports before giving up.
	for attempt := 0; attempt < 3 && addr == ""; attempt++ {
		port := freePort(t)
		cmd = command(t, ctx, bin, "PYSTREAM_PORT="+strconv.Itoa(port), "PYSTREAM_LOG_FORMAT=json", "PYSTREAM_APP_NAME=it-test")
		var err error
		stderr, err = cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines = bufio.NewScanner(stderr)
		for lines.Scan() {
			var rec struct{ Msg, Addr string }
			require.NoError(t, json.Unmarshal(lines.Bytes(), &rec), "log line %q", lines.Text())
			if rec.Msg == "pystream-server listening" {
				addr = rec.Addr
				require.Equal(t, "127.0.0.1:"+strconv.Itoa(port), addr)
				break
			}
		}
		if addr == "" {
			_ = exitCode(t, cmd) // port was taken: the process has exited
		}
	}
	require.NotEmpty(t, addr, "the server logged its address")
	rest := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(stderr)
		rest <- string(b)
	}()

	resp, err := http.Get("http://" + addr + "/api/health")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.JSONEq(t, `{"status":"ok","service":"it-test"}`, string(body))

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	// Read stderr to its end (the process closes it as it exits) before
	// Wait, which closes the pipe and would drop what is still unread.
	logs := <-rest
	require.Equal(t, 0, exitCode(t, cmd))
	require.Contains(t, logs, `"msg":"request"`)
	require.Contains(t, logs, `"path":"/api/health"`)
	require.Contains(t, logs, `"msg":"stopped"`)
}

// docs/phase-0-foundation.md § Start and stop: PYSTREAM_PORT=abc exits 2
// naming PYSTREAM_PORT; an address in use exits 1.
func TestBinaryExitStatuses(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	t.Run("invalid port", func(t *testing.T) {
		cmd := command(t, ctx, bin, "PYSTREAM_PORT=abc")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		require.Equal(t, 2, ee.ExitCode())
		first := strings.SplitN(string(out), "\n", 2)[0]
		require.Contains(t, first, "PYSTREAM_PORT")
		require.Contains(t, first, "1 to 65535")
	})

	// docs/security.md § Safe defaults: a non-loopback bind without an
	// auth file is a configuration error, before anything is bound.
	t.Run("non-loopback without auth", func(t *testing.T) {
		cmd := command(t, ctx, bin, "PYSTREAM_HOST=0.0.0.0", "PYSTREAM_PORT="+strconv.Itoa(freePort(t)))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "output: %s", out)
		require.Equal(t, 2, ee.ExitCode(), "output: %s", out)
		require.Contains(t, string(out), "PYSTREAM_AUTH_FILE")
		require.Contains(t, string(out), "PYSTREAM_INSECURE=true")
	})

	// docs/security.md § The internal port: cluster mode with a
	// non-loopback internal address and no certificates is a
	// configuration error naming the setting, before anything is bound
	// or created.
	t.Run("non-loopback internal address without cluster TLS", func(t *testing.T) {
		dataDir := filepath.Join(t.TempDir(), "data")
		cmd := command(t, ctx, bin, "PYSTREAM_PORT="+strconv.Itoa(freePort(t)), "PYSTREAM_KAFKA_PORT=0", "PYSTREAM_NODE_ID=1",
			"PYSTREAM_CLUSTER=1=127.0.0.1:"+strconv.Itoa(freePort(t))+",2=10.0.0.2:7001", "PYSTREAM_DATA_DIR="+dataDir)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "output: %s", out)
		require.Equal(t, 2, ee.ExitCode(), "output: %s", out)
		require.Contains(t, string(out), "PYSTREAM_CLUSTER_TLS_CERT")
		require.Contains(t, string(out), "10.0.0.2:7001")
		require.Contains(t, string(out), "PYSTREAM_INSECURE=true")
		require.NoDirExists(t, dataDir)
	})

	t.Run("address in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		cmd := command(t, ctx, bin, "PYSTREAM_PORT="+port)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "output: %s", out)
		require.Equal(t, 1, ee.ExitCode())
		require.Contains(t, string(out), "address already in use")
	})

	t.Run("warning level accepted", func(t *testing.T) {
		// The configuration is accepted (not exit 2): the binary gets as
		// far as listening, which fails on a port in use with exit 1, and
		// its error line is printed at the WARNING threshold.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		cmd := command(t, ctx, bin, "PYSTREAM_PORT="+port, "PYSTREAM_LOG_LEVEL=warning")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "output: %s", out)
		require.Equal(t, 1, ee.ExitCode(), "output: %s", out)
		require.Contains(t, string(out), "level=ERROR")
		require.NotContains(t, string(out), "level=INFO", "INFO is below the WARNING threshold")
	})
}
