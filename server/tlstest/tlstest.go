package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The file names New writes into its directory.
const (
	// FileCACert is the CA certificate: what clients trust
	// (--ca-file) and what the server checks client certificates against
	// (PYSTREAM_TLS_CLIENT_CA).
	FileCACert = "ca.pem"
	// FileServerCert and FileServerKey are PYSTREAM_TLS_CERT and
	// PYSTREAM_TLS_KEY.
	FileServerCert = "server.pem"
	FileServerKey  = "server-key.pem"
	// FileClientCert and FileClientKey are the client's certificate and
	// key for mutual TLS (--cert, --key).
	FileClientCert = "client.pem"
	FileClientKey  = "client-key.pem"
)

// Validity is how long every generated certificate is valid, starting a
// minute in the past to allow for clock skew.
const Validity = time.Hour

// PKI is one generated CA with a server and a client certificate, as files
// and as values. It is read-only once built and safe for concurrent use.
type PKI struct {
	// Dir is the directory holding the files.
	Dir string
	// CACert, ServerCert, ServerKey, ClientCert and ClientKey are the
	// paths of the PEM files.
	CACert, ServerCert, ServerKey, ClientCert, ClientKey string
	// Pool holds the CA certificate alone.
	Pool *x509.CertPool
	// Client is the client certificate with its key, for
	// tls.Config.Certificates.
	Client tls.Certificate
}

// ClientTLS returns a client configuration that trusts the CA and presents
// the client certificate (which a server without PYSTREAM_TLS_CLIENT_CA
// never asks for).
func (p *PKI) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: p.Pool, Certificates: []tls.Certificate{p.Client}, MinVersion: tls.VersionTLS12}
}

// New generates a CA, a server certificate (SANs 127.0.0.1, ::1 and
// localhost) and a client certificate (common name "pystream-test-client"),
// writes them into dir and returns them. It fails the test on any error.
func New(t testing.TB, dir string) *PKI {
	t.Helper()
	p, err := Generate(dir)
	if err != nil {
		t.Fatalf("tlstest: %v", err)
	}
	return p
}

// Generate is New without a testing.TB.
func Generate(dir string) (*PKI, error) {
	caKey, caCert, caDER, err := newCA("PyStream test CA")
	if err != nil {
		return nil, err
	}
	p := inDir(dir)
	p.Pool.AddCert(caCert)
	if err := writePEM(p.CACert, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if _, err := issue(server, caCert, caKey, p.ServerCert, p.ServerKey); err != nil {
		return nil, err
	}
	client := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "pystream-test-client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if p.Client, err = issue(client, caCert, caKey, p.ClientCert, p.ClientKey); err != nil {
		return nil, err
	}
	return p, nil
}

// newCA returns a self-signed CA certificate and its key.
func newCA(name string) (*ecdsa.PrivateKey, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("tlstest: generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	if err := fillCommon(tmpl); err != nil {
		return nil, nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("tlstest: create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("tlstest: parse CA certificate: %w", err)
	}
	return key, cert, der, nil
}

// issue signs tmpl with the CA, writes the certificate and a new key to
// certPath and keyPath, and returns them as a tls.Certificate.
func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlstest: generate key: %w", err)
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	if err := fillCommon(tmpl); err != nil {
		return tls.Certificate{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlstest: create certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlstest: encode key: %w", err)
	}
	if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(keyPath, "PRIVATE KEY", keyDER); err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

// fillCommon sets a random serial number and the validity window.
func fillCommon(tmpl *x509.Certificate) error {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("tlstest: serial number: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Minute)
	tmpl.NotAfter = time.Now().Add(Validity)
	return nil
}

// writePEM writes one PEM block to path with mode 0600.
func writePEM(path, blockType string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("tlstest: %w", err)
	}
	return nil
}

// Load reads a PKI that New wrote into dir.
func Load(dir string) (*PKI, error) {
	p := inDir(dir)
	ca, err := os.ReadFile(p.CACert)
	if err != nil {
		return nil, fmt.Errorf("tlstest: %w", err)
	}
	if !p.Pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("tlstest: no certificate in %s", p.CACert)
	}
	if p.Client, err = tls.LoadX509KeyPair(p.ClientCert, p.ClientKey); err != nil {
		return nil, fmt.Errorf("tlstest: %w", err)
	}
	return p, nil
}

// inDir is the PKI whose files have their fixed names in dir, with an
// empty pool.
func inDir(dir string) *PKI {
	return &PKI{
		Dir:        dir,
		CACert:     filepath.Join(dir, FileCACert),
		ServerCert: filepath.Join(dir, FileServerCert),
		ServerKey:  filepath.Join(dir, FileServerKey),
		ClientCert: filepath.Join(dir, FileClientCert),
		ClientKey:  filepath.Join(dir, FileClientKey),
		Pool:       x509.NewCertPool(),
	}
}
