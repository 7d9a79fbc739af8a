package clustertls_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/clustertls"
)

func newCA(t *testing.T) *clustertls.CA {
	t.Helper()
	ca, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	return ca
}

func identity(t *testing.T, ca *clustertls.CA, id int) *clustertls.Identity {
	t.Helper()
	ident, err := ca.Identity(id, time.Now())
	require.NoError(t, err)
	return ident
}

// The identity format: one URI SAN pystream-node:ID, ID a decimal from 1,
// written without sign or leading zero.
func TestClusterTLSNodeID(t *testing.T) {
	uri := func(s string) *url.URL {
		u, err := url.Parse(s)
		require.NoError(t, err)
		return u
	}
	for _, tc := range []struct {
		name string
		uris []*url.URL
		want int
	}{
		{"one", []*url.URL{clustertls.NodeURI(2)}, 2},
		{"large", []*url.URL{uri("pystream-node:2147483647")}, 2147483647},
		{"other schemes ignored", []*url.URL{uri("spiffe://x/y"), uri("pystream-node:7")}, 7},
		{"none", nil, 0},
		{"other scheme only", []*url.URL{uri("spiffe://cluster/node/1")}, 0},
		{"zero", []*url.URL{uri("pystream-node:0")}, 0},
		{"leading zero", []*url.URL{uri("pystream-node:02")}, 0},
		{"sign", []*url.URL{uri("pystream-node:+2")}, 0},
		{"too large", []*url.URL{uri("pystream-node:2147483648")}, 0},
		{"not a number", []*url.URL{uri("pystream-node:two")}, 0},
		// Found by FuzzNodeID: the URI is the node's name as a whole.
		{"query", []*url.URL{uri("pystream-node:2?role=controller")}, 0},
		{"empty query", []*url.URL{uri("pystream-node:2?")}, 0},
		{"fragment", []*url.URL{uri("pystream-node:2#x")}, 0},
		{"two", []*url.URL{clustertls.NodeURI(1), clustertls.NodeURI(2)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := clustertls.NodeID(&x509.Certificate{URIs: tc.uris})
			if tc.want == 0 {
				require.ErrorIs(t, err, clustertls.ErrNoNodeID)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// handshake runs a handshake between a dialing and an accepting end over
// a pipe and returns both ends' errors.
func handshake(t *testing.T, client, server *tls.Config) (clientErr, serverErr error) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	done := make(chan error, 1)
	go func() {
		s := tls.Server(b, server)
		err := s.Handshake()
		if err == nil {
			// A TLS 1.3 client learns of its refusal at its first read.
			_, err = s.Write([]byte{1})
		}
		done <- err
		_ = b.Close()
	}()
	c := tls.Client(a, client)
	clientErr = c.Handshake()
	if clientErr == nil {
		_, clientErr = c.Read(make([]byte, 1))
	}
	_ = a.Close()
	return clientErr, <-done
}

func TestClusterTLSHandshake(t *testing.T) {
	ca, other := newCA(t), newCA(t)
	n1, n2, n3 := identity(t, ca, 1), identity(t, ca, 2), identity(t, ca, 3)
	stranger := identity(t, other, 1) // node 1's id, from another CA
	members := func(peer int) error {
		if peer != 1 && peer != 2 {
			return clustertls.ErrNotMember
		}
		return nil
	}
	t.Run("members", func(t *testing.T) {
		ce, se := handshake(t, n1.Config(clustertls.WantNode(2)), n2.Config(members))
		require.NoError(t, ce)
		require.NoError(t, se)
	})
	t.Run("no client certificate", func(t *testing.T) {
		cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13} //nolint:gosec // a stranger's dial
		ce, se := handshake(t, cfg, n2.Config(members))
		require.Error(t, ce)
		require.ErrorIs(t, se, clustertls.ErrNoCertificate)
	})
	t.Run("another CA", func(t *testing.T) {
		cfg := stranger.Config(nil)
		cfg.VerifyConnection = nil // the stranger trusts anything
		ce, se := handshake(t, cfg, n2.Config(members))
		require.Error(t, ce)
		require.ErrorIs(t, se, clustertls.ErrUntrusted)
	})
	t.Run("not a member", func(t *testing.T) {
		ce, se := handshake(t, n3.Config(nil), n2.Config(members))
		require.Error(t, ce)
		require.ErrorIs(t, se, clustertls.ErrNotMember)
	})
	t.Run("dialed node presents another id", func(t *testing.T) {
		ce, se := handshake(t, n1.Config(clustertls.WantNode(3)), n2.Config(members))
		require.ErrorIs(t, ce, clustertls.ErrWrongNode)
		require.Error(t, se)
	})
	t.Run("dialed node from another CA", func(t *testing.T) {
		ce, _ := handshake(t, n2.Config(clustertls.WantNode(1)), stranger.Config(nil))
		require.ErrorIs(t, ce, clustertls.ErrUntrusted)
	})
	t.Run("TLS 1.2 refused", func(t *testing.T) {
		cfg := n1.Config(nil)
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		ce, se := handshake(t, cfg, n2.Config(members))
		require.Error(t, ce)
		require.Error(t, se)
	})
}

// A certificate that is not a node certificate of the CA, or a key of
// another certificate, is refused when loading.
func TestClusterTLSNewIdentity(t *testing.T) {
	ca, other := newCA(t), newCA(t)
	c1, k1, err := ca.Issue(1, time.Now())
	require.NoError(t, err)
	_, k2, err := ca.Issue(2, time.Now())
	require.NoError(t, err)
	_, err = clustertls.NewIdentity(c1, k1, ca.CertPEM())
	require.NoError(t, err)
	_, err = clustertls.NewIdentity(c1, k2, ca.CertPEM())
	require.ErrorIs(t, err, clustertls.ErrKeyMismatch)
	_, err = clustertls.NewIdentity(c1, k1, other.CertPEM())
	require.ErrorIs(t, err, clustertls.ErrUntrusted)
	caKey, err := ca.KeyPEM()
	require.NoError(t, err)
	_, err = clustertls.NewIdentity(ca.CertPEM(), caKey, ca.CertPEM())
	require.ErrorIs(t, err, clustertls.ErrUntrusted, "the CA's own certificate is no node's")
	_, err = clustertls.NewIdentity(c1, k1, []byte("not pem"))
	var fe *clustertls.FileError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "CA", fe.Which)
	expired, ek, err := ca.Issue(1, time.Now().Add(-3*clustertls.NodeValidity))
	require.NoError(t, err)
	_, err = clustertls.NewIdentity(expired, ek, ca.CertPEM())
	require.ErrorIs(t, err, clustertls.ErrUntrusted)
}

func TestClusterTLSWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	w, err := clustertls.WriteDir(dir, 3, time.Now())
	require.NoError(t, err)
	require.Equal(t, clustertls.Written{NewCA: true, Nodes: []int{1, 2, 3}}, w)
	mode := func(name string) os.FileMode {
		st, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		return st.Mode().Perm()
	}
	require.Equal(t, os.FileMode(0o700), mode("."))
	require.Equal(t, os.FileMode(0o600), mode(clustertls.FileCAKey))
	require.Equal(t, os.FileMode(0o644), mode(clustertls.FileCACert))
	for id := 1; id <= 3; id++ {
		require.Equal(t, os.FileMode(0o600), mode(clustertls.NodeKeyFile(id)))
		ident, err := clustertls.Load(filepath.Join(dir, clustertls.NodeCertFile(id)), filepath.Join(dir, clustertls.NodeKeyFile(id)),
			filepath.Join(dir, clustertls.FileCACert))
		require.NoError(t, err)
		require.Equal(t, id, ident.ID)
	}
	before, err := os.ReadFile(filepath.Join(dir, clustertls.NodeCertFile(1)))
	require.NoError(t, err)

	// Again with one more node: the same CA, node 4 added, nothing
	// overwritten.
	w, err = clustertls.WriteDir(dir, 4, time.Now())
	require.NoError(t, err)
	require.Equal(t, clustertls.Written{Nodes: []int{4}}, w)
	after, err := os.ReadFile(filepath.Join(dir, clustertls.NodeCertFile(1)))
	require.NoError(t, err)
	require.Equal(t, before, after)
	n4, err := clustertls.Load(filepath.Join(dir, clustertls.NodeCertFile(4)), filepath.Join(dir, clustertls.NodeKeyFile(4)),
		filepath.Join(dir, clustertls.FileCACert))
	require.NoError(t, err)
	require.Equal(t, 4, n4.ID)

	_, err = clustertls.WriteDir(dir, 0, time.Now())
	require.ErrorIs(t, err, clustertls.ErrNoNodeID)
}

func TestClusterTLSLoadErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := clustertls.WriteDir(dir, 2, time.Now())
	require.NoError(t, err)
	p := func(name string) string { return filepath.Join(dir, name) }
	var fe *clustertls.FileError
	_, err = clustertls.Load(p("missing.pem"), p(clustertls.NodeKeyFile(1)), p(clustertls.FileCACert))
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "certificate", fe.Which)
	require.Equal(t, p("missing.pem"), fe.Path)
	_, err = clustertls.Load(p(clustertls.NodeCertFile(1)), p(clustertls.NodeKeyFile(2)), p(clustertls.FileCACert))
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "key", fe.Which)
	require.Equal(t, p(clustertls.NodeKeyFile(2)), fe.Path)
	require.True(t, errors.Is(err, clustertls.ErrKeyMismatch))
	_, err = clustertls.Load(p(clustertls.NodeCertFile(1)), p(clustertls.NodeKeyFile(1)), p(clustertls.NodeCertFile(2)))
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "certificate", fe.Which)
	require.ErrorIs(t, err, clustertls.ErrUntrusted)
}
