package apiclient

import (
	"crypto/tls"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/tlstest"
)

// LoadTLSConfig reads the CA and the client pair; files it cannot use
// match ErrTLSFiles.
func TestTLSLoadConfig(t *testing.T) {
	pki := tlstest.New(t, t.TempDir())
	cfg, err := LoadTLSConfig(pki.CACert, pki.ClientCert, pki.ClientKey)
	require.NoError(t, err)
	require.True(t, cfg.RootCAs.Equal(pki.Pool))
	require.Len(t, cfg.Certificates, 1)
	require.Equal(t, uint16(tls.VersionTLS12), cfg.MinVersion)

	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, files := range [][3]string{
		{missing, "", ""},
		{pki.ServerKey, "", ""}, // a key is not a CA certificate
		{pki.CACert, pki.ClientCert, ""},
		{pki.CACert, pki.ClientCert, pki.ServerKey}, // another certificate's key
	} {
		_, err := LoadTLSConfig(files[0], files[1], files[2])
		require.ErrorIs(t, err, ErrTLSFiles, "%v", files)
	}
}

// WithTLSConfig installs the configuration in a clone of the caller's
// transport and leaves the caller's own transport untouched.
func TestTLSWithTLSConfig(t *testing.T) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS13}
	c := New("https://127.0.0.1:1", WithTLSConfig(cfg))
	require.Same(t, cfg, c.http.Transport.(*http.Transport).TLSClientConfig)

	mine := &http.Transport{}
	c = New("https://127.0.0.1:1", WithHTTPClient(&http.Client{Transport: mine}), WithTLSConfig(cfg))
	require.Same(t, cfg, c.http.Transport.(*http.Transport).TLSClientConfig)
	require.NotSame(t, cfg, mine.TLSClientConfig, "the clone has it, not the caller's transport")
}
