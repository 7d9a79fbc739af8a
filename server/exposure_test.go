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

// docs/kafka.md § Authentication and TLS: off loopback the Kafka port
// needs the auth file (SASL) and TLS, so that no token crosses the
// network in clear; PYSTREAM_INSECURE, loopback or a closed port lift it.
func TestExposureKafka(t *testing.T) {
	tests := []struct {
		name      string
		host      string
		auth, tls bool
		port      KafkaPort
		insecure  bool
		kafka     bool // refused, naming the Kafka port
		refused   bool // refused for the HTTP rule (no auth file)
	}{
		{"SASL_SSL off loopback", "0.0.0.0", true, true, 9092, false, false, false},
		{"SASL_PLAINTEXT off loopback", "0.0.0.0", true, false, 9092, false, true, false},
		{"no auth file off loopback", "0.0.0.0", false, true, 9092, false, false, true},
		{"port closed", "0.0.0.0", true, false, 0, false, false, false},
		{"insecure", "0.0.0.0", true, false, 9092, true, false, false},
		{"insecure, no auth", "10.0.0.1", false, false, 9092, true, false, false},
		{"loopback clear", "127.0.0.1", true, false, 9092, false, false, false},
		{"loopback open", "::1", false, false, 9092, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.Host, cfg.KafkaPort, cfg.Insecure = tt.host, tt.port, Switch(tt.insecure)
			if tt.auth {
				cfg.AuthFile = "tokens"
			}
			if tt.tls {
				cfg.TLSCert, cfg.TLSKey = "cert.pem", "key.pem"
			}
			err := checkExposure(cfg)
			if !tt.kafka && !tt.refused {
				require.NoError(t, err)
				return
			}
			var ee *ExposedError
			require.ErrorAs(t, err, &ee)
			require.ErrorIs(t, err, ErrExposed)
			if tt.refused {
				require.Zero(t, ee.KafkaPort, "the HTTP rule speaks first")
				return
			}
			require.Equal(t, int(tt.port), ee.KafkaPort)
			for _, want := range []string{"PYSTREAM_KAFKA_PORT=0", "127.0.0.1", "PYSTREAM_INSECURE=true", "PYSTREAM_TLS_CERT", "no TLS"} {
				require.Contains(t, err.Error(), want)
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
