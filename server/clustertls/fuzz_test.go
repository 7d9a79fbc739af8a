package clustertls_test

import (
	"bytes"
	"crypto/x509"
	"errors"
	"testing"

	"github.com/pystream/pystream/server/clustertls"
)

// FuzzNodeID checks the reader of a certificate's identity (identity.go,
// NodeID) on every certificate crypto/x509 parses from arbitrary DER
// bytes — which is what a peer's handshake hands it, before any chain
// is verified: it never panics; it names a node only when the
// certificate holds exactly one URI SAN of scheme URIScheme and it is
// the canonical NodeURI of an id from 1 to MaxNodeID; it refuses every
// other certificate with ErrNoNodeID; and it decides the same twice.
// Seeds: testdata/fuzz/FuzzNodeID (node certificates the CA issues, and
// certificates with no, two, or odd pystream-node URIs).
func FuzzNodeID(f *testing.F) {
	f.Fuzz(func(t *testing.T, der []byte) {
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return // the handshake refuses it before NodeID sees it
		}
		id, err := clustertls.NodeID(cert)
		again, err2 := clustertls.NodeID(cert)
		if id != again || (err == nil) != (err2 == nil) {
			t.Fatalf("two reads differ: %d %v / %d %v", id, err, again, err2)
		}
		var named []string
		for _, u := range cert.URIs {
			if u.Scheme == clustertls.URIScheme {
				named = append(named, u.String())
			}
		}
		if err != nil {
			if !errors.Is(err, clustertls.ErrNoNodeID) || id != 0 {
				t.Fatalf("NodeID = %d, %v; want 0 and ErrNoNodeID", id, err)
			}
			if len(named) == 1 {
				// One URI of the scheme, refused: it must not be the
				// canonical name of any id the CA would issue.
				for _, u := range cert.URIs {
					if u.Scheme == clustertls.URIScheme && u.Host == "" && u.Path == "" && u.RawQuery == "" && u.Fragment == "" {
						if _, ok := canonical(u.Opaque); ok {
							t.Fatalf("%q refused: %v", u.String(), err)
						}
					}
				}
			}
			return
		}
		if id < 1 || id > clustertls.MaxNodeID {
			t.Fatalf("NodeID = %d, outside [1, %d]", id, clustertls.MaxNodeID)
		}
		if len(named) != 1 {
			t.Fatalf("NodeID = %d from %d %s URIs %q", id, len(named), clustertls.URIScheme, named)
		}
		if want := clustertls.NodeURI(id).String(); !bytes.Equal([]byte(named[0]), []byte(want)) {
			t.Fatalf("NodeID = %d from %q, whose canonical URI is %q", id, named[0], want)
		}
	})
}

// canonical reports whether s is a decimal from 1 to MaxNodeID with no
// sign and no leading zero, and its value.
func canonical(s string) (int, bool) {
	if s == "" || len(s) > 10 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= clustertls.MaxNodeID
}
