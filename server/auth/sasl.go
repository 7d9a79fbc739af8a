package auth

import (
	"bytes"

	"github.com/xdg-go/scram"
)

// The SASL mechanisms, by their registered names.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// Mechanisms are the SASL mechanisms the server offers, strongest first.
func Mechanisms() []string {
	return []string{MechanismSCRAMSHA512, MechanismSCRAMSHA256, MechanismPlain}
}

// maxSASLMessage bounds one SASL message: PLAIN's is two names and a
// token; SCRAM's are a few hundred bytes.
const maxSASLMessage = 4096

// SASL is one server-side SASL exchange (RFC 4422): the client's messages
// go to Step, whose answers go back, until Done. Not safe for concurrent
// use: it belongs to one connection.
type SASL struct {
	set       *Set
	mechanism string
	// conv is the SCRAM conversation (nil for PLAIN); tok the token of
	// the name it claims (nil for an unknown name).
	conv *scram.ServerConversation
	tok  *Token
	user string
	done bool
	// principal is set once the exchange succeeded.
	principal *Token
}

// NewSASL starts an exchange of mechanism; an unknown mechanism is
// ErrUnsupportedMechanism.
func (s *Set) NewSASL(mechanism string) (*SASL, error) {
	c := &SASL{set: s, mechanism: mechanism}
	switch mechanism {
	case MechanismPlain:
	case MechanismSCRAMSHA256, MechanismSCRAMSHA512:
		m, _ := ParseSCRAMMechanism(mechanism)
		srv, err := m.hash().NewServer(func(name string) (scram.StoredCredentials, error) {
			cred, tok := s.scramCredential(m, name)
			c.tok = tok
			return cred.stored(), nil
		})
		if err != nil {
			return nil, err
		}
		c.conv = srv.NewConversation()
	default:
		return nil, ErrUnsupportedMechanism
	}
	return c, nil
}

// Mechanism is the exchange's mechanism.
func (c *SASL) Mechanism() string { return c.mechanism }

// User is the name the client claimed, "" before it sent one: for logs,
// not proven until Done and Principal.
func (c *SASL) User() string { return c.user }

// Done reports whether the exchange ended, in success or failure.
func (c *SASL) Done() bool { return c.done }

// Principal is the proven token once the exchange succeeded, else nil.
func (c *SASL) Principal() *Token { return c.principal }

// Step takes the client's next message and returns the answer to send.
// A failure is a *SASLError (wrapping ErrAuthenticationFailed) and ends
// the exchange; the answer is then nil. It never panics on any input.
func (c *SASL) Step(in []byte) ([]byte, error) {
	if c.done {
		return nil, &SASLError{Mechanism: c.mechanism, User: c.user, Reason: "the SASL exchange has already ended", Err: ErrSASLState}
	}
	if len(in) > maxSASLMessage {
		return nil, c.fail("SASL message too long")
	}
	if c.conv == nil {
		return c.stepPlain(in)
	}
	out, err := c.conv.Step(string(in))
	if c.user == "" {
		c.user = c.conv.Username()
	}
	if err != nil {
		return nil, c.fail("unknown user or wrong token")
	}
	if c.conv.Done() {
		if !c.conv.Valid() || c.tok == nil {
			return nil, c.fail("unknown user or wrong token")
		}
		if a := c.conv.AuthzID(); a != "" && a != c.user {
			return nil, c.fail("an authorization id other than the user name is not supported")
		}
		c.done, c.principal = true, c.tok
	}
	return []byte(out), nil
}

// stepPlain checks the one message of PLAIN (RFC 4616):
// [authzid] NUL authcid NUL passwd.
func (c *SASL) stepPlain(in []byte) ([]byte, error) {
	parts := bytes.Split(in, []byte{0})
	if len(parts) != 3 {
		return nil, c.fail("malformed PLAIN message: want [authzid] NUL user NUL token")
	}
	c.user = string(parts[1])
	if !validTokenName(c.user) {
		c.user = ""
		return nil, c.fail("unknown user or wrong token")
	}
	if len(parts[0]) > 0 && string(parts[0]) != c.user {
		return nil, c.fail("an authorization id other than the user name is not supported")
	}
	tok := c.set.plain(c.user, string(parts[2]))
	if tok == nil {
		return nil, c.fail("unknown user or wrong token")
	}
	c.done, c.principal = true, tok
	return []byte{}, nil
}

// fail ends the exchange with reason.
func (c *SASL) fail(reason string) error {
	c.done = true
	if !validTokenName(c.user) {
		c.user = "" // never log what the client sent that is not a name
	}
	return &SASLError{Mechanism: c.mechanism, User: c.user, Reason: reason, Err: ErrAuthenticationFailed}
}
