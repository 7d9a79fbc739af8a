package server

import (
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/tlstest"
)

// docs/security.md § TLS: without the TLS variables there is no TLS
// configuration; with them, TLS 1.2 minimum, HTTP/1.1 only, and client
// certificates required and verified only with PYSTREAM_TLS_CLIENT_CA.
func TestTLSConfig(t *testing.T) {
	cfg, err := TLSConfig(Defaults())
	require.NoError(t, err)
	require.Nil(t, cfg)
	require.Equal(t, "http", Defaults().Scheme())

	pki := tlstest.New(t, t.TempDir())
	c := withDefaults(func(c *Config) { c.TLSCert, c.TLSKey = pki.ServerCert, pki.ServerKey })
	require.Equal(t, "https", c.Scheme())
	cfg, err = TLSConfig(c)
	require.NoError(t, err)
	require.Equal(t, uint16(tls.VersionTLS12), cfg.MinVersion)
	require.Equal(t, []string{"http/1.1"}, cfg.NextProtos)
	require.Equal(t, tls.NoClientCert, cfg.ClientAuth)
	require.NotNil(t, cfg.Certificates[0].Leaf)

	c.TLSClientCA = pki.CACert
	cfg, err = TLSConfig(c)
	require.NoError(t, err)
	require.Equal(t, tls.RequireAndVerifyClientCert, cfg.ClientAuth)
	_, err = pki.Client.Leaf.Verify(x509.VerifyOptions{Roots: cfg.ClientCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)
}

// A missing file is a *ConfigError naming the variable, with the cause.
func TestTLSConfigMissingFile(t *testing.T) {
	pki := tlstest.New(t, t.TempDir())
	missing := filepath.Join(t.TempDir(), "missing.pem")
	_, err := TLSConfig(withDefaults(func(c *Config) { c.TLSCert, c.TLSKey = pki.ServerCert, missing }))
	require.ErrorIs(t, err, ErrInvalidConfig)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "PYSTREAM_TLS_KEY", ce.Var)
	require.Equal(t, missing, ce.Value)
	require.NotNil(t, ce.Err)
}

// Main refuses a certificate without its key with exit 2 and creates
// nothing (the in-process twin of the binary's test).
func TestTLSMainCertWithoutKey(t *testing.T) {
	pki := tlstest.New(t, t.TempDir())
	code, stderr := runMain(t, t.Context(), nil, []string{"PYSTREAM_TLS_CERT=" + pki.ServerCert})
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, "PYSTREAM_TLS_KEY=")
}

func TestTLSCertificateWindow(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cert := &x509.Certificate{NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
	require.Empty(t, certificateWindow(cert, now))
	require.Contains(t, certificateWindow(cert, now.Add(2*time.Hour)), "expired at")
	require.Contains(t, certificateWindow(cert, now.Add(-2*time.Hour)), "not valid before")
}
