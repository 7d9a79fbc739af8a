package main

import (
	"encoding/json"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCLIUsageErrors pins the exit codes of docs/cli.md: usage errors exit 2, with the error on
// stderr and nothing on stdout.
func TestCLIUsageErrors(t *testing.T) {
	tests := [][]string{
		{"bogus"},
		{"log", "bogus"},
		{"bench", "bogus"},
		{"log", "dump"},
		{"log", "dump", "a", "b"},
		{"log", "verify"},
		{"log", "repair"},
		{"--no-such-flag"},
		{"log", "dump", "--no-such-flag", "x"},
		{"bench", "log", "--records", "0"},
		{"bench", "log", "--records", "many"},
		{"bench", "log", "--batch", "0"},
		{"bench", "log", "extra"},
		{"completion"},
		{"completion", "ksh"},
		{"version", "extra"},
		{"topic", "bogus"},
		{"topic", "create"},
		{"topic", "create", "orders", "-p", "0"},
		{"topic", "create", "orders", "-r", "0"},
		{"topic", "describe"},
		{"topic", "list", "extra"},
		{"produce"},
		{"produce", "orders", "-k", "a", "-K", ":"},
		{"produce", "orders", "-K", ""},
		{"produce", "orders", "-p", "-2"},
		{"produce", "orders", "-p", "x"},
		{"consume"},
		{"consume", "orders", "-p", "x"},
		{"consume", "orders", "-p", "-1"},
		{"consume", "orders", "-o", "+1"},
		{"consume", "orders", "-p", "0", "-o", "soon"},
		{"consume", "orders", "-p", "0", "-o", "+1"},
		{"consume", "orders", "-p", "0", "-f", "%q"},
		{"consume", "orders", "-p", "0", "-n", "-1"},
		{"consume", "orders", "-p", "0", "-f", "%v", "--json"},
		{"consume", "a", "b"},
		{"consume", "-G", "g"},
		{"consume", "-G", "g", "orders", "-p", "0"},
		{"consume", "-G", "g", "orders", "-o", "start"},
		{"consume", "-G", "g", "orders", "--commit-as", "x"},
		{"group", "bogus"},
		{"group", "list", "extra"},
		{"group", "describe"},
		{"group", "delete"},
		{"group", "delete", "g"}, // stdin is not a terminal: --yes is needed
		{"offsets", "describe"},
		{"offsets", "describe", "c", "t", "extra"},
		{"offsets", "reset", "c", "orders:0"},
		{"offsets", "reset", "c", "orders:0", "--to-earliest", "--to-latest"},
		{"offsets", "reset", "c", "orders:x", "--to-earliest"},
		{"offsets", "reset", "c", "orders:0", "--to-offset", "-1"},
		{"cluster", "status", "extra"},
		{"cluster", "bogus"},
		{"broker", "stop"},
		{"broker", "stop", "one"},
		{"broker", "restart", "1"},
		{"partition", "failover", "orders"},
		{"partition", "recover", "orders", "0", "x"},
		{"partition", "catch-up", "orders", "x", "1"},
		{"partition", "move-leader", "orders", "0"},
		{"partition", "move-leader", "orders", "0", "x"},
		{"partition", "move-leader", "orders", "-1", "2"},
		{"cluster", "nodes", "extra"},
		{"cluster", "add-node", "2"},
		{"cluster", "add-node", "two", "127.0.0.1:7002"},
		{"cluster", "add-node", "2", "127.0.0.1:7002", "extra"},
		{"cluster", "remove-node"},
		{"cluster", "remove-node", "-1"},
		{"cluster", "journal", "extra"},
		{"cluster", "journal", "--since", "x"},
		{"cluster", "journal", "--since", "-1"},
		{"bench", "produce", "--records", "0"},
		{"bench", "consume", "--concurrency", "0"},
		{"bench", "produce", "--rf", "0"},
		{"--server", "ftp://host", "topic", "list"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			r := run(t, "", "", args...)
			require.Equal(t, 2, r.code, r.stderr)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, "pystream: ")
			require.Contains(t, r.stderr, "--help")
		})
	}
}

// TestCLIHelp: asking for help, or naming a command group alone, is not an
// error. `cluster` alone is not a group's help: it is `cluster status`
// (TestCLIServerNotRunning, TestCLITour).
func TestCLIHelp(t *testing.T) {
	for _, args := range [][]string{{}, {"--help"}, {"log"}, {"log", "dump", "-h"}, {"bench"},
		{"topic"}, {"offsets"}, {"group"}, {"partition"}, {"broker"}, {"cluster", "--help"}, {"cluster", "journal", "--help"}, {"consume", "--help"}} {
		r := run(t, "", "", args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "Usage:")
	}
}

// TestCLIVersion: the version comes from -ldflags, with the Go version.
func TestCLIVersion(t *testing.T) {
	r := run(t, "", "", "version")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "pystream "+testVersion+" ("+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")\n", r.stdout)

	r = run(t, "", "", "version", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var v map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	require.Equal(t, testVersion, v["version"])
	require.Equal(t, runtime.Version(), v["go"])
}

// TestCLIVersionFlag: --version (and -v) print exactly what `version`
// prints, with --json too, as kcat -V and most tools do.
func TestCLIVersionFlag(t *testing.T) {
	for _, json := range [][]string{nil, {"--json"}} {
		want := run(t, "", "", append([]string{"version"}, json...)...)
		require.Equal(t, 0, want.code, want.stderr)
		for _, flag := range []string{"--version", "-v"} {
			got := run(t, "", "", append([]string{flag}, json...)...)
			require.Equal(t, 0, got.code, got.stderr)
			require.Equal(t, want.stdout, got.stdout, "%s %v", flag, json)
			require.Empty(t, got.stderr)
		}
	}
}

// TestCLICompletion: a script for each supported shell.
func TestCLICompletion(t *testing.T) {
	marks := map[string]string{
		"bash": "complete -o default -F __start_pystream pystream",
		"zsh":  "#compdef pystream",
		"fish": "complete -c pystream",
	}
	for shell, mark := range marks {
		r := run(t, "", "", "completion", shell)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, mark, shell)
	}
}

// TestCLICompletionFromServer: at a Tab, the scripts call the hidden
// `pystream __complete`; it offers the server's topic names, partitions and
// broker ids, and with no server nothing, exit 0 and no error.
func TestCLICompletionFromServer(t *testing.T) {
	url := startServer(t, 2)
	ok(t, url, "", "topic", "create", "orders", "-p", "2", "-r", "1")
	ok(t, url, "", "broker", "stop", "2")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"consume", ""}, "orders\t2 partition(s), replication factor 1\n"},
		{[]string{"consume", "orders", "-p", ""}, "0\t"},
		{[]string{"broker", "start", ""}, "1\tavailable\n2\tstopped\n"},
	} {
		r := ok(t, url, "", append([]string{"__complete"}, tt.args...)...)
		require.True(t, strings.HasPrefix(r.stdout, tt.want), "%v: %q", tt.args, r.stdout)
		require.True(t, strings.HasSuffix(r.stdout, "\n:4\n"), "%v: %q", tt.args, r.stdout)
	}
	r := ok(t, url, "", "__complete", "consume", "orders", "-p", "")
	require.Regexp(t, `^0\tleader \d+, high watermark 0\n1\tleader \d+, high watermark 0\n:4\n$`, r.stdout)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	r = pys(t, down, "", "__complete", "produce", "")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, ":4\n", r.stdout)
	require.NotContains(t, r.stderr, "pystream:")
}

// TestCLIServerNotRunning: a client command with nothing listening at
// --server says so, naming the URL, and exits 1.
func TestCLIServerNotRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	for _, args := range [][]string{{"topic", "list"}, {"consume", "orders", "-p", "0", "-e"}, {"consume", "orders", "-e"}, {"cluster", "status"}, {"cluster"}} {
		r := run(t, "", "", append([]string{"--server", url}, args...)...)
		require.Equal(t, 1, r.code, r.stderr)
		require.Empty(t, r.stdout)
		require.Contains(t, r.stderr, "is the server running at "+url+"?")
	}
	// PYSTREAM_SERVER is the default of --server.
	r := runEnv(t, []string{"PYSTREAM_SERVER=" + url}, "", "topic", "list")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "is the server running at "+url+"?")
}

// TestCLIServerWithoutScheme: --server and PYSTREAM_SERVER take host:port
// without a scheme, as rpk's and kcat's broker flags do, and mean http://
// (docs/cli.md). Nothing listens there, so the command reaches the network
// and exits 1, naming the completed URL, instead of refusing the flag.
func TestCLIServerWithoutScheme(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	require.NoError(t, ln.Close())
	for _, server := range []string{addr, "localhost:" + port} {
		r := run(t, "", "", "--server", server, "topic", "list")
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, "is the server running at http://"+server+"?")
	}
	r := runEnv(t, []string{"PYSTREAM_SERVER=" + addr}, "", "topic", "list")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "is the server running at http://"+addr+"?")
}
