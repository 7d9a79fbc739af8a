package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/pystream/pystream/server/apiclient"
)

// ServerError is an error answer of the server. It prints the server's
// message and code, and unwraps to the *apiclient.Error (so errors.Is works
// against the apiclient sentinels).
type ServerError struct {
	// Op names what the command was doing ("topic describe orders").
	Op string
	// Err is the decoded error answer.
	Err *apiclient.Error
}

func (e *ServerError) Error() string {
	code := e.Err.Code
	if code == "" {
		code = fmt.Sprintf("HTTP %d", e.Err.Status)
	}
	return fmt.Sprintf("%s: %s [%s]", e.Op, e.Err.Message, code)
}

// Unwrap returns the *apiclient.Error.
func (e *ServerError) Unwrap() error { return e.Err }

// UnreachableError means nothing answered at the server URL.
type UnreachableError struct {
	// URL is the --server address.
	URL string
	// Err is the transport error.
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot connect to %s: is the server running at %s? (%v)", e.URL, e.URL, rootCause(e.Err))
}

// Unwrap returns the transport error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// rootCause strips the url.Error and net.OpError layers for a short message.
func rootCause(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// client returns the API client for --server.
func (a *app) client() (*apiclient.Client, error) {
	u, err := serverURL(a.g.server)
	if err != nil {
		return nil, err
	}
	a.serverURL = u
	token := a.g.token
	if token == "" {
		token = a.env.Getenv(TokenEnv)
	}
	opts := []apiclient.Option{apiclient.WithUserAgent("pystream-cli/" + a.env.Version), apiclient.WithToken(token)}
	tlsOpt, err := a.tlsOption()
	if err != nil {
		return nil, err
	}
	if tlsOpt != nil {
		opts = append(opts, tlsOpt)
	}
	return apiclient.New(a.serverURL, opts...), nil
}

// serverURL normalises a --server value. One without "://" (host,
// host:port) is taken as http://, as rpk and kcat take a bare broker
// address; it must be checked before parsing, since url.Parse reads
// "localhost:8000" as scheme "localhost" and refuses "127.0.0.1:8000".
// Anything but an http or https URL with a host is a usage error.
func serverURL(s string) (string, error) {
	raw := s
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usageErrorf("--server %q: want a URL such as %s", s, DefaultServer)
	}
	return u.String(), nil
}

// apiError turns what an apiclient call returned into the error the command
// reports: the server's message for an error answer, a hint when nothing
// listens at the URL, the error itself otherwise.
func (a *app) apiError(op string, err error) error {
	if err == nil {
		return nil
	}
	var ae *apiclient.Error
	if errors.As(err, &ae) {
		return &ServerError{Op: op, Err: ae}
	}
	if terr := tlsError(a.serverURL, err); terr != nil {
		return fmt.Errorf("%s: %w", op, terr)
	}
	var op2 *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op2) && op2.Op == "dial") {
		return &UnreachableError{URL: a.serverURL, Err: err}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// printJSON writes v as one line of JSON on stdout.
func (a *app) printJSON(v any) error {
	return json.NewEncoder(a.env.Stdout).Encode(v)
}
