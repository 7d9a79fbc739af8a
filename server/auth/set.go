package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
)

// Set is the parsed auth file, indexed for the ways a client proves who
// it is: a bearer token (HTTP), SASL/PLAIN and SASL/SCRAM (Kafka).
// Read-only once built: safe for concurrent use.
type Set struct {
	tokens []Token
	// hashed are the lines with a SHA-256 credential, by name.
	hashed map[string]*Token
	// scram are the lines with a SCRAM credential, by mechanism and name.
	scram map[SCRAMMechanism]map[string]*Token
	// decoyKey derives a credential for a name the file does not hold,
	// so that an unknown name fails where a wrong secret does: at the
	// end of the exchange.
	decoyKey [32]byte
}

// NewSet indexes tokens (Parse's or LoadFile's result).
func NewSet(tokens []Token) *Set {
	s := &Set{tokens: tokens, hashed: map[string]*Token{}, scram: map[SCRAMMechanism]map[string]*Token{}}
	for i := range tokens {
		tok := &tokens[i]
		if tok.SCRAM == nil {
			s.hashed[tok.Name] = tok
			continue
		}
		m := tok.SCRAM.Mechanism
		if s.scram[m] == nil {
			s.scram[m] = map[string]*Token{}
		}
		s.scram[m][tok.Name] = tok
	}
	_, _ = rand.Read(s.decoyKey[:]) // never fails (crypto/rand)
	return s
}

// Len is the number of lines (credentials) of the file.
func (s *Set) Len() int { return len(s.tokens) }

// Bearer returns the token whose hash is the hash of secret, or nil. It
// compares with every token in constant time and never stops early, so
// the time it takes says nothing about which token, or how much of one,
// matched.
func (s *Set) Bearer(secret string) *Token {
	sum := sha256.Sum256([]byte(secret))
	var found *Token
	for i := range s.tokens {
		if s.tokens[i].SCRAM != nil {
			continue
		}
		if subtle.ConstantTimeCompare(sum[:], s.tokens[i].Hash[:]) == 1 {
			found = &s.tokens[i]
		}
	}
	return found
}

// plain returns name's token when secret is its token (SASL/PLAIN), else
// nil. An unknown name costs the same comparison as a known one.
func (s *Set) plain(name, secret string) *Token {
	sum := sha256.Sum256([]byte(secret))
	tok, known := s.hashed[name]
	want := [sha256.Size]byte{}
	if known {
		want = tok.Hash
	}
	if subtle.ConstantTimeCompare(sum[:], want[:]) == 1 && known {
		return tok
	}
	return nil
}

// scramCredential returns name's credential for m, or a decoy one (and
// a nil token) for a name that has none: a decoy's proof never matches,
// and its salt is the same at every attempt, so an unknown name looks
// like a known one until the proof.
func (s *Set) scramCredential(m SCRAMMechanism, name string) (*SCRAMCredential, *Token) {
	if tok, ok := s.scram[m][name]; ok {
		return tok.SCRAM, tok
	}
	mac := hmac.New(sha256.New, s.decoyKey[:])
	mac.Write([]byte(m.String() + "\x00" + name))
	seed := mac.Sum(nil)
	key := make([]byte, m.size())
	copy(key, seed) // a stored key no client proof hashes to
	key[len(key)-1] ^= 0x5a
	return &SCRAMCredential{Mechanism: m, Iterations: DefaultSCRAMIterations, Salt: seed[:defaultSCRAMSaltBytes],
		StoredKey: key, ServerKey: key}, nil
}
