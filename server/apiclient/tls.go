package apiclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// WithTLSConfig makes the client use cfg for https:// servers: the CA it
// trusts (RootCAs) and, for a server that requires mutual TLS, the
// certificate it presents (Certificates). LoadTLSConfig builds one from PEM
// files. It applies to the default transport and to the *http.Transport of
// a client given with WithHTTPClient (a clone gets cfg, not the caller's); a
// client whose transport is not an *http.Transport keeps its own TLS
// settings.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *Client) { c.tls = cfg }
}

// applyTLS installs c.tls in a copy of c's transport.
func (c *Client) applyTLS() {
	if c.tls == nil {
		return
	}
	t, ok := c.http.Transport.(*http.Transport)
	if !ok {
		if c.http.Transport != nil {
			return
		}
		t = NewTransport()
	} else {
		t = t.Clone()
	}
	t.TLSClientConfig = c.tls
	hc := *c.http
	hc.Transport = t
	c.http = &hc
}

// LoadTLSConfig builds a client TLS configuration from PEM files:
// caFile holds the CA certificates that signed the server's certificate
// ("" trusts the system's roots), certFile and keyFile the client's
// certificate and key for mutual TLS (both or neither). The configuration
// accepts TLS 1.2 and later, as the server does.
func LoadTLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("%w: a client certificate needs its key, and a key its certificate", ErrTLSFiles)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		data, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("%w: CA file: %w", ErrTLSFiles, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrTLSFiles, caFile)
		}
		cfg.RootCAs = pool
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate %s and key %s: %w", ErrTLSFiles, certFile, keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
