package auth

import (
	"errors"
	"fmt"
)

// The package's sentinels. Answers to clients are made from them and
// from the principal's name, never from a file path or a secret.
var (
	// ErrFile is the cause of every refusal of the auth file's content;
	// errors.Is(err, ErrFile) tells a malformed file from an unreadable
	// one.
	ErrFile = errors.New("auth: malformed auth file")
	// ErrSCRAMCredential is the cause of a credential
	// NewSCRAMCredential cannot make.
	ErrSCRAMCredential = errors.New("auth: cannot make a SCRAM credential")
	// ErrUnsupportedMechanism is a SASL mechanism the server does not
	// offer.
	ErrUnsupportedMechanism = errors.New("auth: unsupported SASL mechanism")
	// ErrAuthenticationFailed is a SASL exchange that did not prove the
	// principal: an unknown name, a wrong secret, a malformed message.
	ErrAuthenticationFailed = errors.New("auth: authentication failed")
	// ErrSASLState is a SASL step after the exchange ended.
	ErrSASLState = errors.New("auth: SASL exchange already ended")
)

// SASLError is a failed SASL exchange: the mechanism, the name the
// client claimed ("" when it sent none) and why. Error() names no
// secret, so it may be logged whole; Reason is what the client is told.
type SASLError struct {
	Mechanism string
	User      string
	// Reason is the client's answer: what failed, in PyStream's terms.
	Reason string
	// Err is ErrAuthenticationFailed or ErrSASLState.
	Err error
}

func (e *SASLError) Error() string {
	return fmt.Sprintf("auth: SASL %s of %q: %s", e.Mechanism, e.User, e.Reason)
}

// Unwrap returns the cause.
func (e *SASLError) Unwrap() error { return e.Err }
