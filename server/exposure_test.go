package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/security.md § Safe defaults: off loopback, every client port
// (HTTP and Kafka) needs the auth file and TLS, so that nobody gets in
// without a token and no token crosses the network in clear;
// PYSTREAM_INSECURE lifts it.
func TestExposureRule(t *testing.T) {
	tests := []struct {
		name      string
		host      string
		auth, tls bool
		kafka     KafkaPort
		insecure  bool
		refused   bool
		cleartext bool // refused for TLS, not for the auth file
	}{
		{"loopback", "127.0.0.1", false, false, 9092, false, false, false},
		{"loopback range", "127.1.2.3", false, false, 0, false, false, false},
		{"loopback v6", "::1", false, false, 9092, false, false, false},
		{"localhost", "localhost", false, false, 0, false, false, false},
		{"LOCALHOST", "LOCALHOST", false, false, 0, false, false, false},
		{"loopback with tokens in clear", "127.0.0.1", true, false, 9092, false, false, false},
		{"any v4", "0.0.0.0", false, false, 0, false, true, false},
		{"any v6", "::", false, false, 0, false, true, false},
		{"private", "10.0.0.1", false, false, 0, false, true, false},
		{"name", "pystream.internal", false, false, 0, false, true, false},
		{"a.localhost", "a.localhost", false, false, 0, false, true, false}, // a resolver may not agree
		{"no auth file, TLS", "0.0.0.0", false, true, 9092, false, true, false},
		{"tokens in clear, HTTP only", "0.0.0.0", true, false, 0, false, true, true},
		{"tokens in clear, Kafka too", "0.0.0.0", true, false, 9092, false, true, true},
		{"tokens over TLS", "0.0.0.0", true, true, 9092, false, false, false},
		{"insecure, open", "0.0.0.0", false, false, 9092, true, false, false},
		{"insecure, tokens in clear", "10.0.0.1", true, false, 9092, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.Host, cfg.KafkaPort, cfg.Insecure = tt.host, tt.kafka, Switch(tt.insecure)
			if tt.auth {
				cfg.AuthFile = "tokens"
			}
			if tt.tls {
				cfg.TLSCert, cfg.TLSKey = "cert.pem", "key.pem"
			}
			err := checkExposure(cfg)
			if !tt.refused {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrExposed)
			var ee *ExposedError
			require.ErrorAs(t, err, &ee)
			require.Equal(t, tt.host, ee.Host)
			require.Equal(t, tt.cleartext, ee.Cleartext)
			for _, want := range []string{"127.0.0.1", "PYSTREAM_INSECURE=true"} {
				require.Contains(t, err.Error(), want)
			}
			if !tt.cleartext {
				require.Contains(t, err.Error(), "PYSTREAM_AUTH_FILE")
				return
			}
			require.Contains(t, err.Error(), "PYSTREAM_TLS_CERT")
			if tt.kafka != 0 {
				require.Contains(t, err.Error(), "PYSTREAM_KAFKA_PORT="+strconv.Itoa(int(tt.kafka)))
			} else {
				require.NotContains(t, err.Error(), "Kafka")
			}
		})
	}
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
