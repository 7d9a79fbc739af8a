package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runMain runs Main in a fresh working directory (so no stray .env is read)
// and returns its exit status and stderr.
func runMain(t *testing.T, ctx context.Context, args, environ []string) (int, string) {
	t.Helper()
	t.Chdir(t.TempDir())
	var stderr bytes.Buffer
	code := Main(ctx, args, environ, io.Discard, &stderr)
	return code, stderr.String()
}

// docs/phase-0-foundation.md § Configuration and envconfig's traps: invalid
// configuration prints a message naming the variable and what is allowed,
// then the usage table, and exits 2.
func TestMainInvalidConfig(t *testing.T) {
	tests := []struct {
		env     string
		wantVar string
		allowed string
	}{
		{"PYSTREAM_PORT=abc", "PYSTREAM_PORT", "1 to 65535"},
		{"PYSTREAM_PORT=70000", "PYSTREAM_PORT", "1 to 65535"},
		{"PYSTREAM_LOG_LEVEL=loud", "PYSTREAM_LOG_LEVEL", "DEBUG, INFO, WARNING (or WARN), ERROR or CRITICAL"},
		{"PYSTREAM_LOG_FORMAT=yaml", "PYSTREAM_LOG_FORMAT", "text or json"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			code, stderr := runMain(t, t.Context(), nil, []string{tt.env})
			require.Equal(t, ExitUsage, code)
			first := strings.SplitN(stderr, "\n", 2)[0]
			require.Contains(t, first, tt.wantVar)
			require.Contains(t, first, tt.allowed)
			for _, v := range Variables() {
				require.Contains(t, stderr, v.Name, "usage table lists %s", v.Name)
			}
		})
	}
}

func TestMainMalformedDotEnv(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.WriteFile(DotEnvFile, []byte("PYSTREAM_PORT\n"), 0o600))
	var stderr bytes.Buffer
	code := Main(t.Context(), nil, nil, io.Discard, &stderr)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr.String(), ".env:1")
}

func TestMainHelp(t *testing.T) {
	code, stderr := runMain(t, t.Context(), []string{"-h"}, nil)
	require.Equal(t, ExitOK, code)
	require.Contains(t, stderr, "PYSTREAM_PORT")

	code, _ = runMain(t, t.Context(), []string{"-nope"}, nil)
	require.Equal(t, ExitUsage, code)
	code, _ = runMain(t, t.Context(), []string{"serve"}, nil)
	require.Equal(t, ExitUsage, code)
}

// docs/phase-0-foundation.md § Start and stop: an address in use is a clear
// error and exit status 1.
// The address is bound before anything is created: the data directory a
// server that could not listen would have used does not exist.
func TestMainAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	dataDir := filepath.Join(t.TempDir(), "data")

	code, stderr := runMain(t, t.Context(), nil, []string{"PYSTREAM_PORT=" + port, "PYSTREAM_DATA_DIR=" + dataDir})
	require.Equal(t, ExitFailure, code)
	require.Contains(t, stderr, "address already in use")
	require.Contains(t, stderr, "127.0.0.1:"+port)
	_, err = os.Stat(dataDir)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing created before the address was bound")
}

// --version prints the version on stdout and starts nothing.
func TestMainVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main(t.Context(), []string{"--version"}, nil, &stdout, &stderr)
	require.Equal(t, ExitOK, code)
	require.Regexp(t, `^pystream-server `+regexp.QuoteMeta(Version)+` \(go\S+ \w+/\w+\)\n$`, stdout.String())
	require.Empty(t, stderr.String())
}

// A cancelled context (the binary's SIGTERM) ends a clean run with 0; an
// unknown variable, here from .env, is warned about first.
func TestMainCleanExitWarnsUnknown(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.WriteFile(filepath.Join(".", DotEnvFile), []byte("PYSTREAM_LOGLEVEL=debug\n"), 0o600))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	require.NoError(t, ln.Close())

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stderr bytes.Buffer
	code := Main(ctx, nil, []string{"PYSTREAM_PORT=" + port}, io.Discard, &stderr)
	require.Equal(t, ExitOK, code, stderr.String())
	out := stderr.String()
	require.Contains(t, out, "level=WARNING")
	require.Contains(t, out, "variable=PYSTREAM_LOGLEVEL")
	require.Contains(t, out, "did_you_mean=PYSTREAM_LOG_LEVEL")
	require.Contains(t, out, "pystream-server listening")
	require.Contains(t, out, "version="+Version)
	require.Contains(t, out, "brokers=3")
	require.Contains(t, out, "data_dir=")
}
