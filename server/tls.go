package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"time"
)

// TLS of the HTTP API. PYSTREAM_TLS_CERT and PYSTREAM_TLS_KEY turn it on
// (both or neither); PYSTREAM_TLS_CLIENT_CA adds mutual TLS. The traffic
// between nodes has certificates of its own, PYSTREAM_CLUSTER_TLS_*
// (exposure_internal.go, docs/security.md § The internal port).

// MinTLSVersion is the oldest protocol version the server accepts. Go
// negotiates TLS 1.3 with every client that offers it.
const MinTLSVersion = tls.VersionTLS12

// TLSEnabled reports whether the configuration serves HTTPS.
func (c Config) TLSEnabled() bool { return c.TLSCert != "" }

// Scheme returns "https" when TLS is on, else "http".
func (c Config) Scheme() string {
	if c.TLSEnabled() {
		return "https"
	}
	return "http"
}

// validateTLS checks that the TLS variables come together: a certificate
// needs its key and a key its certificate, and a client CA means nothing
// without a server certificate. It reads no file (TLSConfig does).
func (c Config) validateTLS() error {
	switch {
	case c.TLSCert != "" && c.TLSKey == "":
		return &ConfigError{Var: EnvPrefix + "_TLS_KEY", Value: "", Allowed: "the private key file of PYSTREAM_TLS_CERT: set both or neither"}
	case c.TLSKey != "" && c.TLSCert == "":
		return &ConfigError{Var: EnvPrefix + "_TLS_CERT", Value: "", Allowed: "the certificate file of PYSTREAM_TLS_KEY: set both or neither"}
	case c.TLSClientCA != "" && c.TLSCert == "":
		return &ConfigError{Var: EnvPrefix + "_TLS_CLIENT_CA", Value: c.TLSClientCA, Allowed: "a CA file for mutual TLS, together with PYSTREAM_TLS_CERT and PYSTREAM_TLS_KEY"}
	}
	return nil
}

// TLSConfig reads the files the configuration names and returns the
// server's TLS configuration, or nil when TLS is off. A file that cannot be
// read or parsed, or a key that does not match the certificate, is a
// *ConfigError naming the variable (pystream-server exits 2 on it).
//
// The configuration accepts TLS 1.2 and 1.3 with Go's default cipher
// suites (ECDHE only for TLS 1.2: no RSA key exchange since Go 1.22), and
// offers only HTTP/1.1: the server's timeouts and header limits are those
// of net/http's HTTP/1 server. With PYSTREAM_TLS_CLIENT_CA it requires and
// verifies a client certificate on every connection.
func TLSConfig(c Config) (*tls.Config, error) {
	if err := c.validateTLS(); err != nil {
		return nil, err
	}
	if !c.TLSEnabled() {
		return nil, nil
	}
	certPEM, err := os.ReadFile(c.TLSCert)
	if err != nil {
		return nil, tlsFileError("_TLS_CERT", c.TLSCert, "a readable PEM certificate file", err)
	}
	if _, err := firstCertificate(certPEM); err != nil {
		return nil, tlsFileError("_TLS_CERT", c.TLSCert, "a PEM file whose first block is the server's certificate", err)
	}
	keyPEM, err := os.ReadFile(c.TLSKey)
	if err != nil {
		return nil, tlsFileError("_TLS_KEY", c.TLSKey, "a readable PEM private key file", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, tlsFileError("_TLS_KEY", c.TLSKey, "the PEM private key of PYSTREAM_TLS_CERT's certificate", err)
	}
	if pair.Leaf == nil { // GODEBUG=x509keypairleaf=0
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, tlsFileError("_TLS_CERT", c.TLSCert, "a PEM file whose first block is the server's certificate", err)
		}
	}
	cfg := &tls.Config{
		MinVersion:   MinTLSVersion,
		Certificates: []tls.Certificate{pair},
		NextProtos:   []string{"http/1.1"},
	}
	if c.TLSClientCA != "" {
		caPEM, err := os.ReadFile(c.TLSClientCA)
		if err != nil {
			return nil, tlsFileError("_TLS_CLIENT_CA", c.TLSClientCA, "a readable PEM file of CA certificates", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, tlsFileError("_TLS_CLIENT_CA", c.TLSClientCA, "a PEM file of CA certificates", errNoCertificate)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// errNoCertificate: a PEM file held no CERTIFICATE block.
var errNoCertificate = fmt.Errorf("no PEM CERTIFICATE block")

// firstCertificate parses the first CERTIFICATE block of a PEM file.
func firstCertificate(data []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errNoCertificate
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

// tlsFileError is the *ConfigError of a TLS file; the cause is part of
// Allowed because pystream-server prints only Var, Value and Allowed.
func tlsFileError(suffix, path, allowed string, err error) error {
	return &ConfigError{Var: EnvPrefix + suffix, Value: path, Allowed: allowed + " (" + err.Error() + ")", Err: err}
}

// certificateWindow says whether the certificate is outside its validity
// window at now: "" when valid, else what is wrong, for a start-up warning
// (an expired certificate still serves; clients will refuse it).
func certificateWindow(cert *x509.Certificate, now time.Time) string {
	switch {
	case now.Before(cert.NotBefore):
		return "not valid before " + cert.NotBefore.UTC().Format(time.RFC3339)
	case now.After(cert.NotAfter):
		return "expired at " + cert.NotAfter.UTC().Format(time.RFC3339)
	}
	return ""
}

// logTLS logs the certificate being served and whether clients must
// present one, and warns when the certificate is outside its validity
// window.
func (s *Server) logTLS() {
	leaf := s.tls.Certificates[0].Leaf
	mutual := s.tls.ClientAuth == tls.RequireAndVerifyClientCert
	s.logger.Info("TLS on", "cert", s.cfg.TLSCert, "subject", leaf.Subject.String(),
		"not_after", leaf.NotAfter.UTC().Format(time.RFC3339), "client_certificates_required", mutual)
	if problem := certificateWindow(leaf, time.Now()); problem != "" {
		s.logger.Warn("TLS certificate is "+problem+"; clients will refuse it", "cert", s.cfg.TLSCert)
	}
}
