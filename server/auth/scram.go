package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/xdg-go/scram"
)

// SCRAMMechanism is a SASL SCRAM mechanism (RFC 5802, RFC 7677).
type SCRAMMechanism uint8

// The SCRAM mechanisms a credential may be for.
const (
	SCRAMSHA256 SCRAMMechanism = iota + 1
	SCRAMSHA512
)

// SCRAM credential bounds. A client runs PBKDF2 for Iterations rounds at
// every connection, so the bounds protect clients as much as they keep
// the credential strong; RFC 7677 asks for at least 4096.
const (
	MinSCRAMIterations     = 4096
	MaxSCRAMIterations     = 1_000_000
	DefaultSCRAMIterations = 8192
	minSCRAMSaltBytes      = 16
	maxSCRAMSaltBytes      = 64
	defaultSCRAMSaltBytes  = 24
)

// String is the SASL mechanism name: SCRAM-SHA-256 or SCRAM-SHA-512.
func (m SCRAMMechanism) String() string {
	switch m {
	case SCRAMSHA256:
		return MechanismSCRAMSHA256
	case SCRAMSHA512:
		return MechanismSCRAMSHA512
	}
	return "SCRAM-unknown"
}

// filePrefix is the credential field's prefix in the auth file.
func (m SCRAMMechanism) filePrefix() string { return strings.ToLower(m.String()) }

// hash is the mechanism's hash function, as xdg-go/scram wants it.
func (m SCRAMMechanism) hash() scram.HashGeneratorFcn {
	if m == SCRAMSHA512 {
		return scram.SHA512
	}
	return scram.SHA256
}

// size is the mechanism's hash size: the length of StoredKey and
// ServerKey.
func (m SCRAMMechanism) size() int {
	if m == SCRAMSHA512 {
		return sha512.Size
	}
	return sha256.Size
}

// ParseSCRAMMechanism reads a mechanism's SASL name (SCRAM-SHA-256) or
// its auth-file prefix (scram-sha-256), or the short forms sha-256 and
// sha-512.
func ParseSCRAMMechanism(s string) (SCRAMMechanism, bool) {
	switch strings.ToUpper(strings.TrimPrefix(strings.ToUpper(s), "SCRAM-")) {
	case "SHA-256":
		return SCRAMSHA256, true
	case "SHA-512":
		return SCRAMSHA512, true
	}
	return 0, false
}

// SCRAMCredential is what the server stores of a SCRAM secret (RFC 5802
// § 3): the salt and iteration count the client derives its keys with,
// and the two keys that check the client's proof and prove the server's
// own knowledge. The secret itself cannot be recovered from it.
type SCRAMCredential struct {
	Mechanism  SCRAMMechanism
	Iterations int
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
}

// String is the credential's field in the auth file:
// scram-sha-256:ITERATIONS:SALT:STOREDKEY:SERVERKEY, the last three in
// standard base64 with padding.
func (c *SCRAMCredential) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return c.Mechanism.filePrefix() + ":" + strconv.Itoa(c.Iterations) + ":" + b64(c.Salt) + ":" + b64(c.StoredKey) + ":" + b64(c.ServerKey)
}

// stored is the credential as xdg-go/scram's server wants it.
func (c *SCRAMCredential) stored() scram.StoredCredentials {
	return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: c.Iterations},
		StoredKey: c.StoredKey, ServerKey: c.ServerKey}
}

// NewSCRAMCredential derives the credential of mechanism m for name's
// secret, with a fresh random salt and iterations rounds (0:
// DefaultSCRAMIterations). The secret is the same token a bearer or
// PLAIN client sends.
func NewSCRAMCredential(m SCRAMMechanism, name, secret string, iterations int) (*SCRAMCredential, error) {
	if iterations == 0 {
		iterations = DefaultSCRAMIterations
	}
	if iterations < MinSCRAMIterations || iterations > MaxSCRAMIterations {
		return nil, fmt.Errorf("%w: %d iterations: want %d to %d", ErrSCRAMCredential, iterations, MinSCRAMIterations, MaxSCRAMIterations)
	}
	if m != SCRAMSHA256 && m != SCRAMSHA512 {
		return nil, fmt.Errorf("%w: unknown mechanism", ErrSCRAMCredential)
	}
	if secret == "" {
		return nil, fmt.Errorf("%w: empty secret", ErrSCRAMCredential)
	}
	salt := make([]byte, defaultSCRAMSaltBytes)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	cl, err := m.hash().NewClient(name, secret, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSCRAMCredential, err)
	}
	sc, err := cl.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: iterations})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSCRAMCredential, err)
	}
	return &SCRAMCredential{Mechanism: m, Iterations: iterations, Salt: salt, StoredKey: sc.StoredKey, ServerKey: sc.ServerKey}, nil
}

// parseSCRAM reads ITERATIONS:SALT:STOREDKEY:SERVERKEY, the part of a
// credential field after its mechanism prefix.
func parseSCRAM(m SCRAMMechanism, s string) (*SCRAMCredential, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return nil, fmt.Errorf("%s credential: %d parts after %s:; want ITERATIONS:SALT:STOREDKEY:SERVERKEY", m, len(parts), m.filePrefix())
	}
	n, err := strconv.Atoi(parts[0])
	if err != nil || n < MinSCRAMIterations || n > MaxSCRAMIterations || strconv.Itoa(n) != parts[0] {
		return nil, fmt.Errorf("%s credential: iterations %q: want %d to %d", m, parts[0], MinSCRAMIterations, MaxSCRAMIterations)
	}
	c := &SCRAMCredential{Mechanism: m, Iterations: n}
	dec := func(what, v string, lo, hi int) ([]byte, error) {
		b, err := base64.StdEncoding.Strict().DecodeString(v)
		if err != nil || len(b) < lo || len(b) > hi || base64.StdEncoding.EncodeToString(b) != v {
			if lo == hi {
				return nil, fmt.Errorf("%s credential: %s: want %d bytes in standard base64", m, what, lo)
			}
			return nil, fmt.Errorf("%s credential: %s: want %d to %d bytes in standard base64", m, what, lo, hi)
		}
		return b, nil
	}
	if c.Salt, err = dec("salt", parts[1], minSCRAMSaltBytes, maxSCRAMSaltBytes); err != nil {
		return nil, err
	}
	if c.StoredKey, err = dec("stored key", parts[2], m.size(), m.size()); err != nil {
		return nil, err
	}
	if c.ServerKey, err = dec("server key", parts[3], m.size(), m.size()); err != nil {
		return nil, err
	}
	return c, nil
}
