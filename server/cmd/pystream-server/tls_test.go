package main

import (
	"bufio"
	"context"
	"crypto/tls"
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
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/tlstest"
)

// listening is the start-up line of the binary, as JSON.
type listening struct {
	Msg, Addr, Scheme, Health, Docs string
}

// startTLSBinary runs the binary with env (plus a free port and JSON logs)
// until the test ends, and returns its start-up line.
func startTLSBinary(t *testing.T, env ...string) listening {
	t.Helper()
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	for attempt := 0; attempt < 3; attempt++ {
		port := freePort(t)
		cmd := command(t, ctx, bin, append([]string{"PYSTREAM_PORT=" + strconv.Itoa(port), "PYSTREAM_LOG_FORMAT=json",
			"PYSTREAM_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}, env...)...)
		stderr, err := cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			var rec listening
			require.NoError(t, json.Unmarshal(lines.Bytes(), &rec), "log line %q", lines.Text())
			if rec.Msg == "pystream-server listening" {
				go func() { _, _ = io.Copy(io.Discard, stderr) }()
				t.Cleanup(func() {
					_ = cmd.Process.Signal(os.Interrupt)
					_ = cmd.Wait()
				})
				return rec
			}
		}
		_ = cmd.Wait() // the port was taken, or the binary refused to start
	}
	t.Fatal("the binary never logged its start-up line")
	return listening{}
}

// docs/security.md § TLS: with PYSTREAM_TLS_CERT and PYSTREAM_TLS_KEY the
// binary serves HTTPS, says so in its start-up line, and the API client
// that trusts the CA is answered; one that does not trust it fails
// verification, and plain HTTP on the port is answered 400.
func TestBinaryTLS(t *testing.T) {
	pki := tlstest.New(t, t.TempDir())
	rec := startTLSBinary(t, "PYSTREAM_TLS_CERT="+pki.ServerCert, "PYSTREAM_TLS_KEY="+pki.ServerKey)
	require.Equal(t, "https", rec.Scheme)
	require.Equal(t, "https://"+rec.Addr+"/api/health", rec.Health)
	require.Equal(t, "https://"+rec.Addr+"/docs", rec.Docs)

	for _, host := range []string{rec.Addr, strings.Replace(rec.Addr, "127.0.0.1", "localhost", 1)} {
		c := apiclient.New("https://"+host, apiclient.WithTLSConfig(&tls.Config{RootCAs: pki.Pool}))
		h, err := c.Health(t.Context())
		require.NoError(t, err, host)
		require.Equal(t, "ok", h.Status)
	}

	// Without the CA: the system roots do not vouch for a test CA.
	_, err := apiclient.New("https://" + rec.Addr).Health(t.Context())
	var verr *tls.CertificateVerificationError
	require.ErrorAs(t, err, &verr)

	// Plain HTTP to the HTTPS port: net/http's 400, never the API.
	resp, err := http.Get("http://" + rec.Addr + "/api/health")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(body), "HTTPS")

	// TLS 1.1 is refused (MinVersion is 1.2); a client that offers 1.3 gets it.
	_, err = tls.Dial("tcp", rec.Addr, &tls.Config{RootCAs: pki.Pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
	require.Error(t, err)
	// HTTP/2 is not offered: the server is net/http's HTTP/1 server.
	conn, err := tls.Dial("tcp", rec.Addr, &tls.Config{RootCAs: pki.Pool, NextProtos: []string{"h2", "http/1.1"}})
	require.NoError(t, err)
	require.Equal(t, uint16(tls.VersionTLS13), conn.ConnectionState().Version)
	require.Equal(t, "http/1.1", conn.ConnectionState().NegotiatedProtocol)
	require.NoError(t, conn.Close())
}

// docs/security.md § TLS: with PYSTREAM_TLS_CLIENT_CA a client must present
// a certificate that CA signed: none, or one from another CA, is refused in
// the handshake; the right one is answered 200.
func TestBinaryMutualTLS(t *testing.T) {
	pki := tlstest.New(t, t.TempDir())
	other := tlstest.New(t, t.TempDir())
	rec := startTLSBinary(t, "PYSTREAM_TLS_CERT="+pki.ServerCert, "PYSTREAM_TLS_KEY="+pki.ServerKey,
		"PYSTREAM_TLS_CLIENT_CA="+pki.CACert)
	base := "https://" + rec.Addr

	tests := []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{"no client certificate", nil, false},
		{"certificate of another CA", []tls.Certificate{other.Client}, false},
		{"certificate of the client CA", []tls.Certificate{pki.Client}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &tls.Config{RootCAs: pki.Pool, Certificates: tt.certs}
			c := apiclient.New(base, apiclient.WithTLSConfig(cfg))
			h, err := c.Health(t.Context())
			if tt.ok {
				require.NoError(t, err)
				require.Equal(t, "ok", h.Status)
				return
			}
			// The server's alert: TLS 1.3 reports it on the first read.
			require.Error(t, err)
			var ae *apiclient.Error
			require.False(t, errors.As(err, &ae), "no HTTP answer at all: %v", err)
			var alert tls.AlertError
			var nerr *net.OpError
			require.True(t, errors.As(err, &alert) || errors.As(err, &nerr), "a TLS alert: %v", err)
		})
	}

	// The client certificate is loaded from files as the CLI does.
	cfg, err := apiclient.LoadTLSConfig(pki.CACert, pki.ClientCert, pki.ClientKey)
	require.NoError(t, err)
	_, err = apiclient.New(base, apiclient.WithTLSConfig(cfg)).Health(t.Context())
	require.NoError(t, err)
}

// docs/security.md § TLS: a TLS file that is missing, unreadable or does
// not match exits 2 naming the variable, before the address is bound or
// the data directory created.
func TestBinaryTLSConfigErrors(t *testing.T) {
	bin := buildBinary(t)
	pki := tlstest.New(t, t.TempDir())
	other := tlstest.New(t, t.TempDir())
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	require.NoError(t, os.WriteFile(garbage, []byte("not PEM\n"), 0o600))
	missing := filepath.Join(t.TempDir(), "missing.pem")

	tests := []struct {
		name    string
		env     []string
		wantVar string
	}{
		{"cert without key", []string{"PYSTREAM_TLS_CERT=" + pki.ServerCert}, "PYSTREAM_TLS_KEY"},
		{"key without cert", []string{"PYSTREAM_TLS_KEY=" + pki.ServerKey}, "PYSTREAM_TLS_CERT"},
		{"client CA without cert", []string{"PYSTREAM_TLS_CLIENT_CA=" + pki.CACert}, "PYSTREAM_TLS_CLIENT_CA"},
		{"missing cert", []string{"PYSTREAM_TLS_CERT=" + missing, "PYSTREAM_TLS_KEY=" + pki.ServerKey}, "PYSTREAM_TLS_CERT"},
		{"cert not PEM", []string{"PYSTREAM_TLS_CERT=" + garbage, "PYSTREAM_TLS_KEY=" + pki.ServerKey}, "PYSTREAM_TLS_CERT"},
		{"missing key", []string{"PYSTREAM_TLS_CERT=" + pki.ServerCert, "PYSTREAM_TLS_KEY=" + missing}, "PYSTREAM_TLS_KEY"},
		{"mismatched key", []string{"PYSTREAM_TLS_CERT=" + pki.ServerCert, "PYSTREAM_TLS_KEY=" + other.ServerKey}, "PYSTREAM_TLS_KEY"},
		{"client CA not PEM", []string{"PYSTREAM_TLS_CERT=" + pki.ServerCert, "PYSTREAM_TLS_KEY=" + pki.ServerKey, "PYSTREAM_TLS_CLIENT_CA=" + garbage}, "PYSTREAM_TLS_CLIENT_CA"},
		{"missing client CA", []string{"PYSTREAM_TLS_CERT=" + pki.ServerCert, "PYSTREAM_TLS_KEY=" + pki.ServerKey, "PYSTREAM_TLS_CLIENT_CA=" + missing}, "PYSTREAM_TLS_CLIENT_CA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), "data")
			cmd := command(t, t.Context(), bin, append(tt.env, "PYSTREAM_PORT="+strconv.Itoa(freePort(t)), "PYSTREAM_DATA_DIR="+dataDir)...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "output: %s", out)
			require.Equal(t, 2, ee.ExitCode(), "output: %s", out)
			first := strings.SplitN(string(out), "\n", 2)[0]
			require.Contains(t, first, tt.wantVar+"=")
			_, err = os.Stat(dataDir)
			require.ErrorIs(t, err, os.ErrNotExist, "nothing created")
		})
	}
}
