package kafka

import (
	"encoding/binary"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/syntax"
)

// SASL authentication (KIP-43, KIP-152), served only with an auth file
// (Config.Auth). A connection starts unauthenticated: it may ask
// ApiVersions and then SaslHandshake names a mechanism (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512; server/auth runs them). After a v1
// handshake the mechanism's messages travel in SaslAuthenticate
// requests; after a v0 handshake they travel bare, each a size-prefixed
// frame without a request header (handleRawSASL). Once the exchange
// proves a principal, every request is authorized by its role and
// prefixes (authz.go). Re-authentication (KIP-368) is not offered:
// SessionLifetimeMillis is 0, and a second handshake is
// ILLEGAL_SASL_STATE.
//
// Any other request before authentication closes the connection
// (conn.handle), as a Kafka broker does: answering it an error code
// would mean decoding, and answering, requests of a client not yet known,
// and a client that forgot to configure SASL learns more from a closed
// connection right after ApiVersions than from an authorization error it
// would retry. A failed authentication is answered (the client is told
// what failed, in PyStream's terms) and the connection is then closed.

// maxUnauthenticatedBytes bounds a request frame before authentication:
// ApiVersions and the SASL messages are small, and a client not yet known
// may not make the server hold a megabyte.
const maxUnauthenticatedBytes = 64 << 10

// saslHandshake answers SaslHandshake (key 17) v0-v1: the mechanisms
// offered, and starts an exchange of the one the client named.
func (s *Server) saslHandshake(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = auth.Mechanisms()
	c := x.c
	if c.principal != nil || c.sasl != nil {
		resp.ErrorCode = x.code(kerr.IllegalSaslState.Code)
		c.closeAfter = true
		return resp
	}
	conv, err := s.cfg.Auth.NewSASL(req.Mechanism)
	if err != nil {
		resp.ErrorCode = x.code(kerr.UnsupportedSaslMechanism.Code)
		c.closeAfter, x.logged = true, true
		c.s.refusals.Refuse(c.log, c.nc.RemoteAddr(), "sasl", "kafka authentication failed: unsupported SASL mechanism", "mechanism", syntax.Quote(req.Mechanism))
		return resp
	}
	c.sasl, c.raw = conv, req.Version == 0
	return resp
}

// saslAuthenticate answers SaslAuthenticate (key 36) v0-v2: one step of
// the exchange the handshake started.
func (s *Server) saslAuthenticate(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	c := x.c
	if c.sasl == nil {
		resp.ErrorCode = x.code(kerr.IllegalSaslState.Code)
		resp.ErrorMessage = kmsg.StringPtr("SaslAuthenticate needs a SaslHandshake v1 first, once per connection")
		c.closeAfter = true
		return resp
	}
	out, err := c.saslStep(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = x.code(kerr.SaslAuthenticationFailed.Code)
		resp.ErrorMessage = kmsg.StringPtr(err.Error())
		c.closeAfter, x.logged = true, true
		return resp
	}
	resp.SASLAuthBytes = out
	return resp
}

// saslStep runs one step of the connection's exchange, logs its end, and
// returns the answer, or the error the client is told (naming the
// mechanism and what failed, never the secret).
func (c *conn) saslStep(in []byte) ([]byte, error) {
	conv := c.sasl
	out, err := conv.Step(in)
	if err != nil {
		c.sasl = nil
		var se *auth.SASLError
		reason := "authentication failed"
		if errors.As(err, &se) {
			reason = se.Reason
		}
		c.s.refusals.Refuse(c.log, c.nc.RemoteAddr(), "sasl", "kafka authentication failed", "principal", conv.User(), "mechanism", conv.Mechanism(), "why", reason)
		return nil, errorf(ErrSASL, "%s with %s: %s", conv.Mechanism(), syntax.Quote(conv.User()), reason)
	}
	if conv.Done() {
		c.principal, c.sasl, c.raw = conv.Principal(), nil, false
		c.log.Info("kafka client authenticated", "principal", c.principal.Name, "mechanism", conv.Mechanism(), "role", c.principal.Role.String())
	}
	return out, nil
}

// handleRawSASL answers a bare SASL message, after a v0 handshake: the
// answer is the mechanism's message with a size prefix and no header.
// A failure closes the connection without an answer, as Kafka does.
func (c *conn) handleRawSASL(dst, frame []byte) ([]byte, error) {
	out, err := c.saslStep(frame)
	if err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(out)))
	return append(dst, out...), nil
}

func failSASLHandshake(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.SASLHandshakeRequest).ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.ErrorCode = code
	resp.SupportedMechanisms = auth.Mechanisms()
	return resp
}

func failSASLAuthenticate(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.ErrorCode = code
	return resp
}
