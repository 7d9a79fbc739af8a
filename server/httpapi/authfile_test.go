package httpapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var hashA = HashToken("a")

func TestAuthFileParse(t *testing.T) {
	toks, line, err := parseAuthFile([]byte("# comment\n\n  \nops admin " + hashA + "\napp\tread\t" + HashToken("b") + "\tpay,billing.\n"))
	require.NoError(t, err, "line %d", line)
	require.Len(t, toks, 2)
	require.Equal(t, "ops", toks[0].Name)
	require.Equal(t, RoleAdmin, toks[0].Role)
	require.Empty(t, toks[0].Prefixes)
	require.Equal(t, RoleRead, toks[1].Role)
	require.Equal(t, []string{"pay", "billing."}, toks[1].Prefixes)
	// No final newline is fine too.
	_, _, err = parseAuthFile([]byte("ops admin " + hashA))
	require.NoError(t, err)
}

// Strict: every malformed line is refused, with its number.
func TestAuthFileRefusals(t *testing.T) {
	tests := []struct {
		name, content string
		line          int
		want          string
	}{
		{"empty", "", 0, "no token"},
		{"comments only", "# x\n", 0, "no token"},
		{"two fields", "ops admin\n", 1, "2 fields"},
		{"five fields", "ops admin " + hashA + " pay extra\n", 1, "5 fields"},
		{"bad role", "ops root " + hashA + "\n", 1, `role "root"`},
		{"role case", "ops Admin " + hashA + "\n", 1, `role "Admin"`},
		{"raw token", "ops admin mysecret\n", 1, "hash"},
		{"no prefix", "ops admin " + strings.TrimPrefix(hashA, "sha256:") + "\n", 1, "hash"},
		{"short", "ops admin " + hashA[:40] + "\n", 1, "hash"},
		{"upper hex", "ops admin sha256:" + strings.ToUpper(hashA[7:]) + "\n", 1, "hash"},
		{"not hex", "ops admin sha256:" + strings.Repeat("z", 64) + "\n", 1, "hash"},
		{"dup name", "ops admin " + hashA + "\nops read " + HashToken("b") + "\n", 2, "already used on line 1"},
		{"dup hash", "ops admin " + hashA + "\nro read " + hashA + "\n", 2, "same token as line 1"},
		{"bad name", "o/ps admin " + hashA + "\n", 1, "token name"},
		{"empty prefix", "ops admin " + hashA + " pay,\n", 1, "topic prefix"},
		{"bad prefix", "ops admin " + hashA + " pay/x\n", 1, "topic prefix"},
		{"crlf", "ops admin " + hashA + "\r\n", 1, "carriage return"},
		{"nul", "ops admin " + hashA + "\x00\n", 1, "control character"},
		{"non-ascii", "# ok\nöps admin " + hashA + "\n", 2, "non-ASCII"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, line, err := parseAuthFile([]byte(tt.content))
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrAuthFile))
			require.Equal(t, tt.line, line)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAuthFileLoadError(t *testing.T) {
	path := t.TempDir() + "/tokens"
	_, err := LoadAuthFile(path)
	var fe *AuthFileError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, path, fe.Path)
	require.False(t, errors.Is(err, ErrAuthFile), "missing, not malformed")
}

func TestAuthTokenLookup(t *testing.T) {
	toks, _, err := parseAuthFile([]byte("a admin " + hashA + "\nb read " + HashToken("b") + "\n"))
	require.NoError(t, err)
	ts := &tokenSet{tokens: toks}
	require.Equal(t, "a", ts.lookup("a").Name)
	require.Equal(t, "b", ts.lookup("b").Name)
	require.Nil(t, ts.lookup("c"))
	require.Nil(t, ts.lookup(""))
	require.Nil(t, ts.lookup(hashA), "the hash is not the token")
}

// formatAuthFile writes tokens back in the file's format.
func formatAuthFile(toks []Token) string {
	var b strings.Builder
	for _, tok := range toks {
		b.WriteString(tok.Name + " " + tok.Role.String() + " sha256:")
		const hexdigits = "0123456789abcdef"
		for _, c := range tok.Hash {
			b.WriteByte(hexdigits[c>>4])
			b.WriteByte(hexdigits[c&15])
		}
		if len(tok.Prefixes) > 0 {
			b.WriteString(" " + strings.Join(tok.Prefixes, ","))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzParseAuthFile: the parser never panics; what it accepts is valid
// token by token, parses the same twice, and survives being written back
// and parsed again unchanged. Seeds in testdata/fuzz/FuzzParseAuthFile.
func FuzzParseAuthFile(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("ops admin " + hashA + "\n"))
	f.Add([]byte("ops admin " + hashA + "\napp write " + HashToken("b") + " pay,billing.\n"))
	f.Add([]byte("ops admin " + hashA + "\ngarbage\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, line, err := parseAuthFile(data)
		if err != nil {
			require.True(t, errors.Is(err, ErrAuthFile))
			require.GreaterOrEqual(t, line, 0)
			require.LessOrEqual(t, line, strings.Count(string(data), "\n")+1)
			return
		}
		require.NotEmpty(t, toks)
		again, _, err := parseAuthFile(data)
		require.NoError(t, err)
		require.Equal(t, toks, again)
		for _, tok := range toks {
			require.True(t, validTokenName(tok.Name))
			require.True(t, tok.Role >= RoleRead && tok.Role <= RoleAdmin)
			for _, p := range tok.Prefixes {
				require.True(t, validPrefix(p))
			}
		}
		round, _, err := parseAuthFile([]byte(formatAuthFile(toks)))
		require.NoError(t, err)
		require.Equal(t, toks, round)
	})
}
