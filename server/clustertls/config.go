package clustertls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
)

// Identity is a node's credentials on the internal port: its certificate
// and key, the node id the certificate names, and the cluster CA that
// every peer's certificate must chain to. It is read-only once built and
// safe for concurrent use.
type Identity struct {
	// ID is the node id the certificate names (NodeID).
	ID int
	// Leaf is the node's certificate, parsed.
	Leaf *x509.Certificate

	cert  tls.Certificate
	roots *x509.CertPool
}

// NewIdentity builds an Identity from PEM bytes: the node's certificate,
// its key and the cluster CA's certificates. The certificate must name a
// node id and be one of the CA's node certificates (ErrUntrusted
// otherwise), and the key must be its own (ErrKeyMismatch).
func NewIdentity(certPEM, keyPEM, caPEM []byte) (*Identity, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, &FileError{Which: "CA", Err: errors.New("no PEM CERTIFICATE block")}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		var block *pem.Block
		if block, _ = pem.Decode(certPEM); block == nil {
			return nil, &FileError{Which: "certificate", Err: errors.New("no PEM block")}
		}
		return nil, &FileError{Which: "key", Err: fmt.Errorf("%w: %w", ErrKeyMismatch, err)}
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, &FileError{Which: "certificate", Err: err}
		}
	}
	var chain []*x509.Certificate
	for _, der := range pair.Certificate[1:] {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, &FileError{Which: "certificate", Err: err}
		}
		chain = append(chain, c)
	}
	id := &Identity{Leaf: pair.Leaf, cert: pair, roots: roots}
	if id.ID, err = id.verify(pair.Leaf, chain); err != nil {
		return nil, &FileError{Which: "certificate", Err: err}
	}
	return id, nil
}

// Load reads an Identity from three PEM files: the node's certificate
// (PYSTREAM_CLUSTER_TLS_CERT), its key (PYSTREAM_CLUSTER_TLS_KEY) and the
// cluster CA (PYSTREAM_CLUSTER_TLS_CA). A file that cannot be read or
// used is a *FileError naming it.
func Load(certFile, keyFile, caFile string) (*Identity, error) {
	read := func(which, path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, &FileError{Which: which, Path: path, Err: err}
		}
		return b, nil
	}
	certPEM, err := read("certificate", certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := read("key", keyFile)
	if err != nil {
		return nil, err
	}
	caPEM, err := read("CA", caFile)
	if err != nil {
		return nil, err
	}
	id, err := NewIdentity(certPEM, keyPEM, caPEM)
	var fe *FileError
	if errors.As(err, &fe) {
		fe.Path = map[string]string{"certificate": certFile, "key": keyFile, "CA": caFile}[fe.Which]
	}
	return id, err
}

// Config is the internal port's TLS configuration, for both ends of a
// connection: TLS 1.3 only, this node's certificate presented, the peer's
// required, chained to the cluster CA and naming a node id, which
// checkPeer then accepts or refuses (nil accepts). The accepting end
// passes a membership check, a dialing end one that wants the id it
// dialed (WantNode). It is the only place the internal tls.Config is
// built.
//
// The peer's host name is not checked: a node is its id, whatever
// address reaches it (routes, NAT and proxies change addresses, not ids).
func (id *Identity) Config(checkPeer func(peer int) error) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		MaxVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.cert},
		// Asked for, and required by VerifyConnection, so that a peer
		// without one is refused with ErrNoCertificate.
		ClientAuth: tls.RequestClientCert,
		// Both ends check the peer's chain themselves, in
		// VerifyConnection, against the cluster CA and without a host
		// name: crypto/tls's own check would want one.
		InsecureSkipVerify: true, //nolint:gosec // VerifyConnection verifies the chain
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return ErrNoCertificate
			}
			peer, err := id.verify(cs.PeerCertificates[0], cs.PeerCertificates[1:])
			if err != nil {
				return err
			}
			if checkPeer != nil {
				return checkPeer(peer)
			}
			return nil
		},
	}
}

// WantNode is the peer check of a dialing end that means to reach node
// want: any other id is ErrWrongNode.
func WantNode(want int) func(peer int) error {
	return func(peer int) error {
		if peer != want {
			return fmt.Errorf("%w: it presents node %d's certificate, node %d was dialed", ErrWrongNode, peer, want)
		}
		return nil
	}
}

// PeerID is the node id of the peer of an established connection (its
// handshake done), as Config verified it.
func PeerID(cs tls.ConnectionState) (int, error) {
	if len(cs.PeerCertificates) == 0 {
		return 0, ErrNoCertificate
	}
	return NodeID(cs.PeerCertificates[0])
}

// verify checks that leaf chains to the cluster CA through intermediates,
// is valid now, serves both ends of a connection, and names a node id,
// which it returns.
func (id *Identity) verify(leaf *x509.Certificate, intermediates []*x509.Certificate) (int, error) {
	opts := x509.VerifyOptions{Roots: id.roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	for _, c := range intermediates {
		opts.Intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(opts); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUntrusted, err)
	}
	if !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		return 0, fmt.Errorf("%w: not valid for server authentication", ErrUntrusted)
	}
	return NodeID(leaf)
}
