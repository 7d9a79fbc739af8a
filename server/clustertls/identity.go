package clustertls

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"strconv"
)

// URIScheme is the scheme of the URI SAN that names a node:
// "pystream-node:2" is node 2.
const URIScheme = "pystream-node"

// MaxNodeID is the largest node id a certificate may name.
const MaxNodeID = 1<<31 - 1

// NodeURI is the URI SAN of node id's certificate.
func NodeURI(id int) *url.URL {
	return &url.URL{Scheme: URIScheme, Opaque: strconv.Itoa(id)}
}

// NodeID reads the node id a certificate names: its one URI SAN of
// scheme URIScheme, exactly "pystream-node:ID" with ID a decimal from 1
// to MaxNodeID, without sign, leading zero, query or fragment. A certificate with none, or with more than one, names no node
// (ErrNoNodeID). It is the only place a node's identity is read from a
// certificate.
func NodeID(cert *x509.Certificate) (int, error) {
	id := 0
	for _, u := range cert.URIs {
		if u.Scheme != URIScheme {
			continue
		}
		if id != 0 {
			return 0, fmt.Errorf("%w: more than one %s URI", ErrNoNodeID, URIScheme)
		}
		n, err := strconv.ParseUint(u.Opaque, 10, 31)
		// The whole URI, not only its opaque part: "pystream-node:2?x"
		// and "pystream-node:2#x" are no node's name.
		if err != nil || n == 0 || u.String() != NodeURI(int(n)).String() {
			return 0, fmt.Errorf("%w: %q is not %s:ID with ID from 1 to %d", ErrNoNodeID, u.String(), URIScheme, MaxNodeID)
		}
		id = int(n)
	}
	if id == 0 {
		return 0, fmt.Errorf("%w: no %s:ID URI among its subject alternative names", ErrNoNodeID, URIScheme)
	}
	return id, nil
}
