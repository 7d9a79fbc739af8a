package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/tlstest"
)

// tlsCertOf returns the PYSTREAM_TLS_CERT value in env, or "".
func tlsCertOf(env []string) string {
	cert := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PYSTREAM_TLS_CERT="); ok {
			cert = v
		}
	}
	return cert
}

// serverScheme is the scheme of a server started with env.
func serverScheme(env []string) string {
	if tlsCertOf(env) != "" {
		return "https"
	}
	return "http"
}

// healthClient is the client startServerAt polls /api/health with: for a
// TLS server, one that trusts the tlstest CA written beside the server
// certificate and presents its client certificate.
func healthClient(t *testing.T, env []string) *http.Client {
	t.Helper()
	cert := tlsCertOf(env)
	if cert == "" {
		return http.DefaultClient
	}
	pki, err := tlstest.Load(filepath.Dir(cert))
	require.NoError(t, err, "a TLS server in these tests uses a tlstest PKI")
	return &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientTLS()}}
}

// tlsEnv is the server environment of pki: TLS, and mutual TLS when mutual.
func tlsEnv(pki *tlstest.PKI, mutual bool) []string {
	env := []string{"PYSTREAM_TLS_CERT=" + pki.ServerCert, "PYSTREAM_TLS_KEY=" + pki.ServerKey}
	if mutual {
		env = append(env, "PYSTREAM_TLS_CLIENT_CA="+pki.CACert)
	}
	return env
}

// docs/cli.md § TLS: against an HTTPS server the CLI works with --ca-file
// (or PYSTREAM_CA_FILE), and without it says the certificate is not
// trusted and which flag to pass.
func TestCLITLS(t *testing.T) {
	pki := tlstest.New(t, t.TempDir())
	url := startServer(t, 1, tlsEnv(pki, false)...)
	require.True(t, strings.HasPrefix(url, "https://"))

	r := run(t, "", "", "--server", url, "--ca-file", pki.CACert, "topic", "create", "secure", "-p", "1", "-r", "1")
	require.Equal(t, 0, r.code, r.stderr)
	r = runEnv(t, []string{"PYSTREAM_SERVER=" + url, "PYSTREAM_CA_FILE=" + pki.CACert}, "", "topic", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "secure")

	r = run(t, "", "", "--server", url, "topic", "list")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "certificate")
	require.Contains(t, r.stderr, "--ca-file")

	r = run(t, "", "", "--server", url, "--ca-file", filepath.Join(t.TempDir(), "missing.pem"), "topic", "list")
	require.Equal(t, 2, r.code, "an unreadable CA file is a usage error: %s", r.stderr)
}

// docs/cli.md § TLS: against a server that requires mutual TLS the CLI
// needs --cert and --key (or PYSTREAM_CLIENT_CERT and PYSTREAM_CLIENT_KEY);
// without them the refusal says so, and one without the other is a usage
// error.
func TestCLIMutualTLS(t *testing.T) {
	pki := tlstest.New(t, t.TempDir())
	url := startServer(t, 1, tlsEnv(pki, true)...)

	r := run(t, "", "", "--server", url, "--ca-file", pki.CACert, "--cert", pki.ClientCert, "--key", pki.ClientKey, "topic", "list")
	require.Equal(t, 0, r.code, r.stderr)
	r = runEnv(t, []string{"PYSTREAM_SERVER=" + url, "PYSTREAM_CA_FILE=" + pki.CACert,
		"PYSTREAM_CLIENT_CERT=" + pki.ClientCert, "PYSTREAM_CLIENT_KEY=" + pki.ClientKey}, "", "cluster")
	require.Equal(t, 0, r.code, r.stderr)

	r = run(t, "", "", "--server", url, "--ca-file", pki.CACert, "topic", "list")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--cert")

	r = run(t, "", "", "--server", url, "--ca-file", pki.CACert, "--cert", pki.ClientCert, "topic", "list")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "--key")
}
