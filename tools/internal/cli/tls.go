package cli

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/pflag"

	"github.com/pystream/pystream/server/apiclient"
)

// addTLSFlags adds --ca-file, --cert and --key, whose defaults come from
// PYSTREAM_CA_FILE, PYSTREAM_CLIENT_CERT and PYSTREAM_CLIENT_KEY.
func (a *app) addTLSFlags(pf *pflag.FlagSet) {
	pf.StringVar(&a.g.caFile, "ca-file", a.env.Getenv(CAFileEnv),
		"PEM file of the CA that signed an https server's certificate (env "+CAFileEnv+"); default: the system's roots")
	pf.StringVar(&a.g.certFile, "cert", a.env.Getenv(ClientCertEnv),
		"PEM client certificate for a server that requires mutual TLS, with --key (env "+ClientCertEnv+")")
	pf.StringVar(&a.g.keyFile, "key", a.env.Getenv(ClientKeyEnv),
		"PEM private key of --cert (env "+ClientKeyEnv+")")
}

// tlsOption returns the apiclient option of the TLS flags, or nil when none
// is set. Files that cannot be used are a usage error.
func (a *app) tlsOption() (apiclient.Option, error) {
	g := a.g
	if g.caFile == "" && g.certFile == "" && g.keyFile == "" {
		return nil, nil
	}
	if (g.certFile == "") != (g.keyFile == "") {
		return nil, usageErrorf("--cert and --key (%s, %s) go together: set both or neither", ClientCertEnv, ClientKeyEnv)
	}
	cfg, err := apiclient.LoadTLSConfig(g.caFile, g.certFile, g.keyFile)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return apiclient.WithTLSConfig(cfg), nil
}

// TLSError is a failed TLS handshake with the server: its certificate is
// not trusted, or it refused the client's (or the missing) certificate.
// It says which flag would help and unwraps to the handshake error.
type TLSError struct {
	// URL is the --server address.
	URL string
	// Hint says what to try.
	Hint string
	// Err is the handshake error.
	Err error
}

func (e *TLSError) Error() string {
	return fmt.Sprintf("TLS with %s failed: %v; %s", e.URL, e.Err, e.Hint)
}

// Unwrap returns the handshake error.
func (e *TLSError) Unwrap() error { return e.Err }

// tlsError recognises a handshake failure in err, or returns nil.
func tlsError(url string, err error) error {
	var verr *tls.CertificateVerificationError
	if errors.As(err, &verr) {
		return &TLSError{URL: url, Err: verr,
			Hint: "pass --ca-file (" + CAFileEnv + ") with the CA that signed the server's certificate"}
	}
	// A TLS alert from the server arrives as a *net.OpError "remote
	// error" (the alert type itself is unexported).
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return &TLSError{URL: url, Err: op,
			Hint: "the server may require a client certificate: pass --cert and --key (" + ClientCertEnv + ", " + ClientKeyEnv + ")"}
	}
	return nil
}
