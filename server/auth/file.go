package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pystream/pystream/topic"
)

// MaxFileBytes bounds the auth file; a larger one is refused.
const MaxFileBytes = 1 << 20

// maxTokenNameLength bounds a token's name.
const maxTokenNameLength = 64

// hashPrefix names the hash function of a bearer token's credential.
const hashPrefix = "sha256:"

// Token is one line of the auth file: a principal's name, role and
// prefixes, and one credential — the SHA-256 of a bearer token (Hash),
// or a SCRAM credential (SCRAM). A principal with several credentials
// has one line, and so one Token, per credential.
type Token struct {
	// Name identifies the principal in logs and error answers; it is the
	// SASL user name.
	Name string
	// Role is what the principal may do.
	Role Role
	// Hash is the SHA-256 of the token when SCRAM is nil: the credential
	// of HTTP bearer authentication and of SASL/PLAIN.
	Hash [sha256.Size]byte
	// SCRAM, when not nil, is the line's SCRAM credential, and Hash is
	// zero.
	SCRAM *SCRAMCredential
	// Prefixes, when not empty, limits the principal to topics whose
	// names start with one of them.
	Prefixes []string
}

// kind is the credential kind of tok: "sha256", "scram-sha-256" or
// "scram-sha-512", as the auth file spells its prefix.
func (tok *Token) kind() string {
	if tok.SCRAM != nil {
		return tok.SCRAM.Mechanism.filePrefix()
	}
	return strings.TrimSuffix(hashPrefix, ":")
}

// FileError is a malformed or unreadable auth file: its path, the 1-based
// line (0 for the file as a whole) and what is wrong. The path belongs in
// the server's log, never in an answer to a client.
type FileError struct {
	Path string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("server: auth file %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("server: auth file %s:%d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// HashToken returns the auth file's credential field of a bearer token:
// "sha256:" and 64 lowercase hex digits.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// LoadFile reads and parses the auth file at path. Its errors are
// *FileError; errors.Is(err, ErrFile) tells a malformed file from an
// unreadable one.
func LoadFile(path string) ([]Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	defer func() { _ = f.Close() }() // read-only
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if len(data) > MaxFileBytes {
		return nil, &FileError{Path: path, Err: fmt.Errorf("%w: larger than %d bytes", ErrFile, MaxFileBytes)}
	}
	tokens, line, err := Parse(data)
	if err != nil {
		return nil, &FileError{Path: path, Line: line, Err: err}
	}
	return tokens, nil
}

// Parse is the one parser of the auth file's content (doc.go). On error
// it returns the 1-based line at fault (0 for the whole file) and an
// error wrapping ErrFile; it never panics.
func Parse(data []byte) ([]Token, int, error) {
	var tokens []Token
	// lines maps a name and credential kind to its line; first maps a
	// name to its first line, whose role and prefixes the others repeat.
	lines := map[[2]string]int{}
	first := map[string]int{}
	secrets := map[string]int{}
	fail := func(line int, format string, args ...any) ([]Token, int, error) {
		return nil, line, fmt.Errorf("%w: "+format, append([]any{ErrFile}, args...)...)
	}
	rows := bytes.Split(data, []byte("\n"))
	if len(rows) > 0 && len(rows[len(rows)-1]) == 0 {
		rows = rows[:len(rows)-1] // the final newline ends the last line
	}
	for i, raw := range rows {
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
			return fail(n, "%d fields; want: name role sha256:HEX|scram-sha-256:...|scram-sha-512:... [prefix,prefix...]", len(fields))
		}
		tok := Token{Name: fields[0]}
		if !validTokenName(tok.Name) {
			return fail(n, "token name %q: want 1 to %d characters of A-Z a-z 0-9 . _ -", tok.Name, maxTokenNameLength)
		}
		role, ok := parseRole(fields[1])
		if !ok {
			return fail(n, "role %q: want admin, write or read", fields[1])
		}
		tok.Role = role
		secret, err := parseCredential(&tok, fields[2])
		if err != nil {
			return fail(n, "%v", err)
		}
		if prev, dup := secrets[secret]; dup {
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
		key := [2]string{tok.Name, tok.kind()}
		if prev, dup := lines[key]; dup {
			return fail(n, "token name %q is already used on line %d (one %s credential a name)", tok.Name, prev, tok.kind())
		}
		if prev, ok := first[tok.Name]; ok {
			p := tokens[indexOfLine(tokens, tok.Name)]
			if p.Role != tok.Role || strings.Join(p.Prefixes, ",") != strings.Join(tok.Prefixes, ",") {
				return fail(n, "token name %q has another role or prefixes on line %d: a name's lines must agree", tok.Name, prev)
			}
		} else {
			first[tok.Name] = n
		}
		lines[key], secrets[secret] = n, n
		tokens = append(tokens, tok)
	}
	if len(tokens) == 0 {
		return fail(0, "no token: every request but health, readiness and docs would be refused")
	}
	return tokens, 0, nil
}

// indexOfLine is the index of name's first token.
func indexOfLine(tokens []Token, name string) int {
	for i := range tokens {
		if tokens[i].Name == name {
			return i
		}
	}
	return -1
}

// parseCredential reads a line's credential field into tok and returns
// the key that must be unique in the file (a copied line is refused).
func parseCredential(tok *Token, field string) (string, error) {
	if h, ok := strings.CutPrefix(field, hashPrefix); ok {
		if len(h) != 2*sha256.Size || strings.ToLower(h) != h {
			return "", errBadHash
		}
		if _, err := hex.Decode(tok.Hash[:], []byte(h)); err != nil {
			return "", errBadHash
		}
		return field, nil
	}
	for _, m := range []SCRAMMechanism{SCRAMSHA256, SCRAMSHA512} {
		if rest, ok := strings.CutPrefix(field, m.filePrefix()+":"); ok {
			c, err := parseSCRAM(m, rest)
			if err != nil {
				return "", err
			}
			tok.SCRAM = c
			return m.filePrefix() + ":" + string(c.StoredKey), nil
		}
	}
	return "", errBadHash
}

// errBadHash is the complaint about a credential field of no known form.
var errBadHash = fmt.Errorf("credential: want %s and 64 lowercase hex digits (pystream auth hash prints it), "+
	"or scram-sha-256:/scram-sha-512: ITERATIONS:SALT:STOREDKEY:SERVERKEY (pystream auth scram prints it)", hashPrefix)

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
