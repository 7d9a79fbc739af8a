package tlstest_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/pystream/pystream/server/tlstest"
	"github.com/stretchr/testify/require"
)

// The server certificate verifies against the CA for every loopback name,
// and the client certificate for client authentication; Load reads back
// what New wrote.
func TestTLSTestCertificatesVerify(t *testing.T) {
	p := tlstest.New(t, t.TempDir())
	server, err := tlsLoad(p.ServerCert)
	require.NoError(t, err)
	for _, name := range []string{"127.0.0.1", "::1", "localhost"} {
		_, err := server.Verify(x509.VerifyOptions{DNSName: name, Roots: p.Pool})
		require.NoError(t, err, name)
	}
	require.WithinDuration(t, time.Now().Add(tlstest.Validity), server.NotAfter, time.Minute)
	_, err = p.Client.Leaf.Verify(x509.VerifyOptions{Roots: p.Pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)

	other := tlstest.New(t, t.TempDir())
	_, err = server.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: other.Pool})
	require.Error(t, err, "another CA does not vouch for it")

	loaded, err := tlstest.Load(p.Dir)
	require.NoError(t, err)
	require.True(t, loaded.Pool.Equal(p.Pool))
	require.Equal(t, p.Client.Certificate, loaded.Client.Certificate)
}
