package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pystream/pystream/topic"
)

// The auth file (PYSTREAM_AUTH_FILE) lists the bearer tokens the server
// accepts, one a line:
//
//	# name      role   hash                                                                     prefixes (optional)
//	ops         admin  sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
//	billing-app write  sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9 billing.,invoices
//
// Fields are separated by spaces or tabs. A line that is empty or starts
// with '#' is skipped. name is 1 to 64 characters of A-Z a-z 0-9 . _ -,
// unique in the file; it is what logs and error answers call the token.
// role is admin, write or read. hash is "sha256:" and the 64 lowercase hex
// digits of the SHA-256 of the token (pystream auth hash prints it);
// unique in the file. prefixes, when present, is a comma-separated list of
// topic-name prefixes that limits the token to those topics.
//
// The file stores hashes, not tokens: a token is a long random secret (32
// random bytes, say), not a password, so one unsalted SHA-256 is enough to
// keep a copied file from being replayed; a slow password hash would only
// slow every request down.
//
// The parser is strict: anything else (a fourth field that is not a
// prefix list, an unknown role, a hash of the wrong length, a carriage
// return, a name used twice, a file with no token) is an *AuthFileError
// naming the line, and the server refuses to start.

// MaxAuthFileBytes bounds the auth file; a larger one is refused.
const MaxAuthFileBytes = 1 << 20

// maxTokenNameLength bounds a token's name.
const maxTokenNameLength = 64

// hashPrefix names the hash function of an auth file's hash field.
const hashPrefix = "sha256:"

// Role is what a token may do, or what a route needs. Each role includes
// the ones below it: admin ⊇ write ⊇ read. The zero value is no role at
// all, so a route that forgot to say what it needs is refused by New.
type Role uint8

// The roles, in increasing order of power.
const (
	// roleUnset is a route that did not say what it needs.
	roleUnset Role = iota
	// RoleOpen is a route anyone who reaches the port may call: health,
	// readiness and the documentation. No token has it.
	RoleOpen
	// RoleRead fetches records and describes topics, the cluster, the
	// journal, consumer offsets and metrics.
	RoleRead
	// RoleWrite is RoleRead plus producing and committing offsets.
	RoleWrite
	// RoleAdmin is RoleWrite plus broker, partition and topic operations
	// and offset resets.
	RoleAdmin
)

// String returns the role's name in the auth file ("open" for RoleOpen).
func (r Role) String() string {
	switch r {
	case RoleOpen:
		return "open"
	case RoleRead:
		return "read"
	case RoleWrite:
		return "write"
	case RoleAdmin:
		return "admin"
	}
	return "unset"
}

// parseRole reads a role of the auth file.
func parseRole(s string) (Role, bool) {
	switch s {
	case "read":
		return RoleRead, true
	case "write":
		return RoleWrite, true
	case "admin":
		return RoleAdmin, true
	}
	return roleUnset, false
}

// Token is one line of the auth file.
type Token struct {
	// Name identifies the token in logs and error answers.
	Name string
	// Role is what the token may do.
	Role Role
	// Hash is the SHA-256 of the token.
	Hash [sha256.Size]byte
	// Prefixes, when not empty, limits the token to topics whose names
	// start with one of them.
	Prefixes []string
}

// AuthFileError is a malformed auth file: its path, the 1-based line (0
// for the file as a whole) and what is wrong.
type AuthFileError struct {
	Path string
	Line int
	Err  error
}

func (e *AuthFileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("server: auth file %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("server: auth file %s:%d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *AuthFileError) Unwrap() error { return e.Err }

// ErrAuthFile is the cause of every refusal of the auth file's content;
// errors.Is(err, ErrAuthFile) tells a malformed file from an unreadable one.
var ErrAuthFile = errors.New("server: malformed auth file")

// HashToken returns the auth file's hash field of token: "sha256:" and
// 64 lowercase hex digits.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// LoadAuthFile reads and parses the auth file at path.
func LoadAuthFile(path string) ([]Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &AuthFileError{Path: path, Err: err}
	}
	defer func() { _ = f.Close() }() // read-only
	data, err := io.ReadAll(io.LimitReader(f, MaxAuthFileBytes+1))
	if err != nil {
		return nil, &AuthFileError{Path: path, Err: err}
	}
	if len(data) > MaxAuthFileBytes {
		return nil, &AuthFileError{Path: path, Err: fmt.Errorf("%w: larger than %d bytes", ErrAuthFile, MaxAuthFileBytes)}
	}
	tokens, line, err := parseAuthFile(data)
	if err != nil {
		return nil, &AuthFileError{Path: path, Line: line, Err: err}
	}
	return tokens, nil
}

// parseAuthFile is the one parser of the auth file. On error it returns
// the 1-based line at fault (0 for the whole file) and an error wrapping
// ErrAuthFile.
func parseAuthFile(data []byte) ([]Token, int, error) {
	var tokens []Token
	names := map[string]int{}
	hashes := map[[sha256.Size]byte]int{}
	fail := func(line int, format string, args ...any) ([]Token, int, error) {
		return nil, line, fmt.Errorf("%w: "+format, append([]any{ErrAuthFile}, args...)...)
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1] // the final newline ends the last line
	}
	for i, raw := range lines {
		n := i + 1
		for _, c := range raw {
			switch {
			case c == '\r':
				return fail(n, "carriage return: save the file with LF line endings")
			case c < 0x20 && c != '\t', c == 0x7f:
				return fail(n, "control character 0x%02x", c)
			case c >= 0x80:
				return fail(n, "non-ASCII byte 0x%02x", c)
			}
		}
		line := string(raw)
		if strings.TrimLeft(line, " \t") == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(fields) < 3 || len(fields) > 4 {
			return fail(n, "%d fields; want: name role sha256:HEX [prefix,prefix...]", len(fields))
		}
		tok := Token{Name: fields[0]}
		if !validTokenName(tok.Name) {
			return fail(n, "token name %q: want 1 to %d characters of A-Z a-z 0-9 . _ -", tok.Name, maxTokenNameLength)
		}
		if prev, dup := names[tok.Name]; dup {
			return fail(n, "token name %q is already used on line %d", tok.Name, prev)
		}
		role, ok := parseRole(fields[1])
		if !ok {
			return fail(n, "role %q: want admin, write or read", fields[1])
		}
		tok.Role = role
		h, ok := strings.CutPrefix(fields[2], hashPrefix)
		if !ok || len(h) != 2*sha256.Size || strings.ToLower(h) != h {
			return fail(n, "hash: want %s and 64 lowercase hex digits (pystream auth hash prints it)", hashPrefix)
		}
		if _, err := hex.Decode(tok.Hash[:], []byte(h)); err != nil {
			return fail(n, "hash: want %s and 64 lowercase hex digits (pystream auth hash prints it)", hashPrefix)
		}
		if prev, dup := hashes[tok.Hash]; dup {
			return fail(n, "the same token as line %d", prev)
		}
		if len(fields) == 4 {
			for _, p := range strings.Split(fields[3], ",") {
				if !validPrefix(p) {
					return fail(n, "topic prefix %q: want 1 to %d characters of A-Z a-z 0-9 . _ -, comma-separated", p, topic.MaxNameLength)
				}
				tok.Prefixes = append(tok.Prefixes, p)
			}
		}
		names[tok.Name], hashes[tok.Hash] = n, n
		tokens = append(tokens, tok)
	}
	if len(tokens) == 0 {
		return fail(0, "no token: every request but health, readiness and docs would be refused")
	}
	return tokens, 0, nil
}

func validTokenName(s string) bool {
	return s != "" && len(s) <= maxTokenNameLength && nameChars(s)
}

// validPrefix accepts what can start a topic name (topic.ValidateName's
// characters); "." alone is allowed, as it starts ".x".
func validPrefix(s string) bool {
	return s != "" && len(s) <= topic.MaxNameLength && nameChars(s)
}

func nameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
