package syntax

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The rules the configuration (PYSTREAM_HOST, PYSTREAM_CLUSTER) and the
// API (POST /api/cluster/nodes, a group member's client_id) share.
func TestSyntaxRules(t *testing.T) {
	for _, h := range []string{"127.0.0.1", "::1", "localhost", "node-1.example.com", "a"} {
		require.True(t, ValidHost(h), h)
	}
	for _, h := range []string{"", "-a", "a-", "a..b", "a_b", "a b", string(make([]byte, 254))} {
		require.False(t, ValidHost(h), "%q", h)
	}
	for _, a := range []string{"127.0.0.1:7001", "[::1]:1", "node-1:65535", "h:080"} {
		require.True(t, ValidAddr(a), a)
	}
	for _, a := range []string{"127.0.0.1", ":7001", "h:0", "h:65536", "h:99999999999", "h:+1", "h: 1", "bad host:1"} {
		require.False(t, ValidAddr(a), a)
	}
	require.True(t, Printable("kgo/1.0 (é)"))
	require.False(t, Printable("a\nb"))
	require.False(t, Printable("a\x7fb"))
}
