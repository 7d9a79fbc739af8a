package clustertls

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// How long the certificates NewCA and Issue make are valid, from a minute
// before they are made (clock skew between machines).
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	NodeValidity = 2 * 365 * 24 * time.Hour
)

// The file names WriteDir uses.
const (
	FileCACert = "ca.pem"
	FileCAKey  = "ca-key.pem"
)

// NodeCertFile and NodeKeyFile are node id's certificate and key files in
// a WriteDir directory: node-ID.pem and node-ID-key.pem.
func NodeCertFile(id int) string { return "node-" + strconv.Itoa(id) + ".pem" }

// NodeKeyFile is node id's key file in a WriteDir directory.
func NodeKeyFile(id int) string { return "node-" + strconv.Itoa(id) + "-key.pem" }

// CA is a cluster's certificate authority: the one certificate every node
// trusts, and its key, which issues node certificates. It is read-only
// once built and safe for concurrent use.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA with an ECDSA P-256 key, valid for CAValidity from now.
func NewCA(now time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("clustertls: CA key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "PyStream cluster CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("clustertls: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("clustertls: CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key}, nil
}

// ParseCA reads a CA from its certificate and key, as WriteDir writes
// them.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, &FileError{Which: "CA", Err: errors.New("no PEM CERTIFICATE block")}
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, &FileError{Which: "CA", Err: err}
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, &FileError{Which: "key", Err: errors.New("no PEM block")}
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, &FileError{Which: "key", Err: err}
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, &FileError{Which: "key", Err: ErrKeyMismatch}
	}
	return &CA{cert: cert, key: key}, nil
}

// CertPEM is the CA's certificate, PEM-encoded: PYSTREAM_CLUSTER_TLS_CA.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// KeyPEM is the CA's private key, PEM-encoded (SEC 1).
func (ca *CA) KeyPEM() ([]byte, error) { return keyPEM(ca.key) }

// Issue makes node id's certificate and key, PEM-encoded: an ECDSA P-256
// key, the URI SAN NodeURI(id), valid for NodeValidity from now for both
// server and client authentication (a node accepts and dials).
func (ca *CA) Issue(id int, now time.Time) (certPEM, keyPEMBytes []byte, err error) {
	if id < 1 || id > MaxNodeID {
		return nil, nil, fmt.Errorf("clustertls: issue node %d: %w", id, ErrNoNodeID)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("clustertls: node %d key: %w", id, err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "pystream-node-" + strconv.Itoa(id)},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(NodeValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:         []*url.URL{NodeURI(id)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("clustertls: node %d certificate: %w", id, err)
	}
	kp, err := keyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), kp, nil
}

// Identity issues node id's certificate and returns it as an Identity
// trusting this CA: what tests use.
func (ca *CA) Identity(id int, now time.Time) (*Identity, error) {
	c, k, err := ca.Issue(id, now)
	if err != nil {
		return nil, err
	}
	return NewIdentity(c, k, ca.CertPEM())
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("clustertls: key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("clustertls: serial number: %w", err)
	}
	return n, nil
}

// Written is what WriteDir did: the node ids whose files it wrote, and
// whether it made the CA or used the one in the directory.
type Written struct {
	NewCA bool
	Nodes []int
}

// WriteDir makes the certificates of nodes 1 to nodes in dir, created
// with mode 0700 if missing: the CA (ca.pem, ca-key.pem) unless the
// directory holds one already, and node-ID.pem and node-ID-key.pem for
// every node whose certificate is not there yet, signed by the CA. Keys are
// written with mode 0600, certificates 0644. Files present are never
// overwritten, so running it again with more nodes adds theirs.
func WriteDir(dir string, nodes int, now time.Time) (Written, error) {
	var w Written
	if nodes < 1 || nodes > MaxNodeID {
		return w, fmt.Errorf("clustertls: %d nodes: %w", nodes, ErrNoNodeID)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return w, fmt.Errorf("clustertls: %w", err)
	}
	caCert, caKey := filepath.Join(dir, FileCACert), filepath.Join(dir, FileCAKey)
	ca, err := readCA(caCert, caKey)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ca, err = NewCA(now); err != nil {
			return w, err
		}
		kp, err := ca.KeyPEM()
		if err != nil {
			return w, err
		}
		if err := writeNew(caKey, kp, 0o600); err != nil {
			return w, err
		}
		if err := writeNew(caCert, ca.CertPEM(), 0o644); err != nil {
			return w, err
		}
		w.NewCA = true
	case err != nil:
		return w, err
	}
	for id := 1; id <= nodes; id++ {
		certPath, keyPath := filepath.Join(dir, NodeCertFile(id)), filepath.Join(dir, NodeKeyFile(id))
		if _, err := os.Stat(certPath); err == nil {
			continue
		}
		c, k, err := ca.Issue(id, now)
		if err != nil {
			return w, err
		}
		if err := writeNew(keyPath, k, 0o600); err != nil {
			return w, err
		}
		if err := writeNew(certPath, c, 0o644); err != nil {
			return w, err
		}
		w.Nodes = append(w.Nodes, id)
	}
	return w, nil
}

// readCA reads the CA files of a directory; fs.ErrNotExist when there is
// no CA certificate.
func readCA(certPath, keyPath string) (*CA, error) {
	c, err := os.ReadFile(certPath)
	if err != nil {
		return nil, &FileError{Which: "CA", Path: certPath, Err: err}
	}
	k, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, &FileError{Which: "key", Path: keyPath, Err: err}
	}
	ca, err := ParseCA(c, k)
	var fe *FileError
	if errors.As(err, &fe) {
		fe.Path = map[string]string{"CA": certPath, "key": keyPath}[fe.Which]
	}
	return ca, err
}

// writeNew writes a file that must not exist yet, with mode perm, and
// syncs it.
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("clustertls: %w", err)
	}
	_, err = io.Copy(f, bytes.NewReader(data))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("clustertls: write %s: %w", path, err)
	}
	return nil
}
