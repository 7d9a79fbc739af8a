package server

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/security.md § Safe defaults: without an auth file the server binds
// loopback only, unless PYSTREAM_INSECURE says otherwise.
func TestExposureRule(t *testing.T) {
	tests := []struct {
		host     string
		auth     string
		insecure bool
		refused  bool
	}{
		{"127.0.0.1", "", false, false},
		{"127.1.2.3", "", false, false},
		{"::1", "", false, false},
		{"localhost", "", false, false},
		{"LOCALHOST", "", false, false},
		{"0.0.0.0", "", false, true},
		{"::", "", false, true},
		{"10.0.0.1", "", false, true},
		{"pystream.internal", "", false, true},
		{"a.localhost", "", false, true}, // a resolver may not agree
		{"0.0.0.0", "tokens", false, false},
		{"0.0.0.0", "", true, false},
	}
	for _, tt := range tests {
		cfg := Defaults()
		cfg.KafkaPort = 0 // the Kafka listener's own rule is TestExposureKafka
		cfg.Host, cfg.AuthFile, cfg.Insecure = tt.host, tt.auth, Switch(tt.insecure)
		err := checkExposure(cfg)
		require.Equal(t, tt.refused, err != nil, "%+v", tt)
		if tt.refused {
			require.True(t, errors.Is(err, ErrExposed))
			var ee *ExposedError
			require.True(t, errors.As(err, &ee))
			require.Equal(t, tt.host, ee.Host)
		}
	}
}

// docs/kafka.md: the Kafka listener has no authentication, so an auth
// file does not make a non-loopback host safe while it is open: the
// server refuses, naming the port and the three ways out.
func TestExposureKafka(t *testing.T) {
	cfg := Defaults()
	cfg.Host, cfg.AuthFile = "0.0.0.0", "tokens"
	err := checkExposure(cfg)
	var ee *ExposedError
	require.ErrorAs(t, err, &ee)
	require.ErrorIs(t, err, ErrExposed)
	require.Equal(t, int(cfg.KafkaPort), ee.KafkaPort)
	for _, want := range []string{"PYSTREAM_KAFKA_PORT=0", "127.0.0.1", "PYSTREAM_INSECURE=true", "no authentication"} {
		require.Contains(t, err.Error(), want)
	}
	cfg.KafkaPort = 0
	require.NoError(t, checkExposure(cfg), "the listener closed")
	cfg.KafkaPort, cfg.Insecure = 9092, true
	require.NoError(t, checkExposure(cfg), "PYSTREAM_INSECURE")
	cfg.Insecure, cfg.Host = false, "127.0.0.1"
	require.NoError(t, checkExposure(cfg), "loopback")
}

// The probe: PYSTREAM_HOST=0.0.0.0 with no auth file used to serve every
// route to the network. Now Main refuses it with exit 2, saying why and
// how, and creates nothing.
func TestExposureMainRefusesNonLoopbackWithoutAuth(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	code, stderr := runMain(t, t.Context(), nil, []string{"PYSTREAM_HOST=0.0.0.0", "PYSTREAM_DATA_DIR=" + data})
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, "PYSTREAM_HOST=0.0.0.0 is not a loopback address")
	require.Contains(t, stderr, "set PYSTREAM_INSECURE=true")
	require.Contains(t, stderr, "Set PYSTREAM_AUTH_FILE")
	_, err := os.Stat(data)
	require.True(t, os.IsNotExist(err), "nothing created")
}

// PYSTREAM_INSECURE=true lets it start, with a WARNING at start-up.
func TestExposureInsecureIsLoud(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // serve, then shut down at once
	code, stderr := runMain(t, ctx, nil, []string{"PYSTREAM_HOST=0.0.0.0", "PYSTREAM_INSECURE=true",
		"PYSTREAM_PORT=" + strconv.Itoa(freeTestPort(t)), "PYSTREAM_DATA_DIR=" + t.TempDir()})
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stderr, "level=WARNING msg=\"INSECURE: PYSTREAM_INSECURE=true")
}

// A malformed auth file refuses to start with exit 2, naming the line.
func TestExposureMalformedAuthFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte("# ok\nops admin sha256:abc\n"), 0o600))
	code, stderr := runMain(t, t.Context(), nil, []string{"PYSTREAM_AUTH_FILE=" + path, "PYSTREAM_DATA_DIR=" + t.TempDir()})
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, path+":2: ")
	require.True(t, strings.Contains(stderr, "64 lowercase hex digits"), stderr)

	code, stderr = runMain(t, t.Context(), nil, []string{"PYSTREAM_AUTH_FILE=" + path + ".missing", "PYSTREAM_DATA_DIR=" + t.TempDir()})
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, "no such file")
}

// freeTestPort is a TCP port free a moment ago.
func freeTestPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}
