package syntax

import (
	"strings"
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

// A client's value is quoted escaped and cut at MaxQuoted bytes, at a rune
// boundary, with a marker saying how long it was.
func TestQuote(t *testing.T) {
	long := strings.Repeat("a", MaxQuoted+1)
	runes := strings.Repeat("é", MaxQuoted) // two bytes each: the cut falls between runes
	tests := []struct{ in, quote, clip string }{
		{"PLAIN", `"PLAIN"`, "PLAIN"},
		{"a\nb\x00", `"a\nb\x00"`, "a\nb\x00"},
		{long, `"` + long[:MaxQuoted] + `"… (65 bytes)`, long[:MaxQuoted] + "… (65 bytes)"},
		{runes, `"` + runes[:MaxQuoted] + `"… (128 bytes)`, runes[:MaxQuoted] + "… (128 bytes)"},
		{"x" + runes, `"x` + runes[:MaxQuoted-2] + `"… (129 bytes)`, "x" + runes[:MaxQuoted-2] + "… (129 bytes)"},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.quote {
			t.Errorf("Quote(%.10q...) = %q, want %q", tt.in, got, tt.quote)
		}
		if got := Clip(tt.in); got != tt.clip {
			t.Errorf("Clip(%.10q...) = %q, want %q", tt.in, got, tt.clip)
		}
	}
}
