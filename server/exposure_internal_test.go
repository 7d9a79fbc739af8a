package server

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/clustertls"
)

// The internal port's rule (docs/security.md § The internal port):
// without cluster TLS, cluster mode starts only when every internal
// address is a loopback one, or with PYSTREAM_INSECURE.
func TestInternalExposureRule(t *testing.T) {
	loop := ClusterList{1: "127.0.0.1:7001", 2: "127.0.0.2:7002", 3: "localhost:7003"}
	lan := ClusterList{1: "127.0.0.1:7001", 2: "10.0.0.2:7001", 3: "[::1]:7003"}
	for _, tc := range []struct {
		name    string
		cfg     Config
		exposed []string
	}{
		{"embedded cluster", Config{Host: "0.0.0.0"}, nil},
		{"all loopback", Config{NodeID: 1, Cluster: loop}, nil},
		{"ipv6 loopback", Config{NodeID: 1, Cluster: ClusterList{1: "[::1]:7001"}}, nil},
		{"one LAN peer", Config{NodeID: 1, Cluster: lan}, []string{"10.0.0.2:7001"}},
		{"own address exposed", Config{NodeID: 2, Cluster: ClusterList{1: "127.0.0.1:7001", 2: "0.0.0.0:7002"}}, []string{"0.0.0.0:7002"}},
		{"host name", Config{NodeID: 1, Cluster: ClusterList{1: "node1.example:7001"}}, []string{"node1.example:7001"}},
		{"LAN with insecure", Config{NodeID: 1, Cluster: lan, Insecure: true}, nil},
		{"LAN with cluster TLS", Config{NodeID: 1, Cluster: lan, ClusterTLSCert: "c", ClusterTLSKey: "k", ClusterTLSCa: "a"}, nil},
		{"HTTP host does not matter", Config{NodeID: 1, Host: "127.0.0.1", Cluster: ClusterList{1: "192.168.1.5:7001"}}, []string{"192.168.1.5:7001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkInternalExposure(tc.cfg)
			if tc.exposed == nil {
				require.NoError(t, err)
				return
			}
			var ie *InternalExposedError
			require.ErrorAs(t, err, &ie)
			require.ErrorIs(t, err, ErrInternalExposed)
			require.Equal(t, tc.exposed, ie.Addrs)
		})
	}
}

func TestInternalClusterTLSVariables(t *testing.T) {
	cm := Config{NodeID: 2, Cluster: ClusterList{1: "10.0.0.1:7001", 2: "10.0.0.2:7001"}}
	with := func(cert, key, ca string) Config {
		c := cm
		c.ClusterTLSCert, c.ClusterTLSKey, c.ClusterTLSCa = cert, key, ca
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // the variable named, "" for none
	}{
		{"none", cm, ""},
		{"all three", with("c", "k", "a"), ""},
		{"no key", with("c", "", "a"), "PYSTREAM_CLUSTER_TLS_KEY"},
		{"no CA", with("c", "k", ""), "PYSTREAM_CLUSTER_TLS_CA"},
		{"no cert", with("", "k", "a"), "PYSTREAM_CLUSTER_TLS_CERT"},
		{"outside cluster mode", Config{ClusterTLSCert: "c", ClusterTLSKey: "k", ClusterTLSCa: "a"}, "PYSTREAM_CLUSTER_TLS_CERT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.validateClusterTLS()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.want, ce.Var)
		})
	}

	dir := t.TempDir()
	_, err := clustertls.WriteDir(dir, 2, time.Now())
	require.NoError(t, err)
	p := func(name string) string { return filepath.Join(dir, name) }
	ident, err := loadClusterTLS(with(p(clustertls.NodeCertFile(2)), p(clustertls.NodeKeyFile(2)), p(clustertls.FileCACert)))
	require.NoError(t, err)
	require.Equal(t, 2, ident.ID)

	// Node 1's certificate given to node 2.
	_, err = loadClusterTLS(with(p(clustertls.NodeCertFile(1)), p(clustertls.NodeKeyFile(1)), p(clustertls.FileCACert)))
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "PYSTREAM_CLUSTER_TLS_CERT", ce.Var)
	// A key of another certificate.
	_, err = loadClusterTLS(with(p(clustertls.NodeCertFile(2)), p(clustertls.NodeKeyFile(1)), p(clustertls.FileCACert)))
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "PYSTREAM_CLUSTER_TLS_KEY", ce.Var)
	require.True(t, errors.Is(err, clustertls.ErrKeyMismatch))
	// A missing CA file.
	_, err = loadClusterTLS(with(p(clustertls.NodeCertFile(2)), p(clustertls.NodeKeyFile(2)), p("missing.pem")))
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "PYSTREAM_CLUSTER_TLS_CA", ce.Var)
}
