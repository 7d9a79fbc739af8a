package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/clustertls"
)

// docs/security.md § The internal port: pystream cluster certs DIR --nodes
// N makes a CA and N node certificates that load as node identities, keys
// 0600; run again with more nodes, it adds theirs under the same CA.
func TestCLIClusterCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	r := run(t, "", "", "cluster", "certs", dir, "--nodes", "3")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "node 3's certificate")
	for id := 1; id <= 3; id++ {
		ident, err := clustertls.Load(filepath.Join(dir, clustertls.NodeCertFile(id)), filepath.Join(dir, clustertls.NodeKeyFile(id)),
			filepath.Join(dir, clustertls.FileCACert))
		require.NoError(t, err)
		require.Equal(t, id, ident.ID)
		st, err := os.Stat(filepath.Join(dir, clustertls.NodeKeyFile(id)))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	}
	r = run(t, "", "", "cluster", "certs", dir, "--nodes", "4")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "cluster CA")
	_, err := clustertls.Load(filepath.Join(dir, clustertls.NodeCertFile(4)), filepath.Join(dir, clustertls.NodeKeyFile(4)),
		filepath.Join(dir, clustertls.FileCACert))
	require.NoError(t, err)

	r = run(t, "", "", "cluster", "certs", dir, "--nodes", "0")
	require.Equal(t, 2, r.code, "a usage error: %s", r.stderr)
}
