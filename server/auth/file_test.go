package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var hashA = HashToken("a")

func TestAuthFileParse(t *testing.T) {
	toks, line, err := Parse([]byte("# comment\n\n  \nops admin " + hashA + "\napp\tread\t" + HashToken("b") + "\tpay,billing.\n"))
	require.NoError(t, err, "line %d", line)
	require.Len(t, toks, 2)
	require.Equal(t, "ops", toks[0].Name)
	require.Equal(t, RoleAdmin, toks[0].Role)
	require.Empty(t, toks[0].Prefixes)
	require.Equal(t, RoleRead, toks[1].Role)
	require.Equal(t, []string{"pay", "billing."}, toks[1].Prefixes)
	// No final newline is fine too.
	_, _, err = Parse([]byte("ops admin " + hashA))
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
		{"raw token", "ops admin mysecret\n", 1, "credential"},
		{"no prefix", "ops admin " + strings.TrimPrefix(hashA, "sha256:") + "\n", 1, "credential"},
		{"short", "ops admin " + hashA[:40] + "\n", 1, "credential"},
		{"upper hex", "ops admin sha256:" + strings.ToUpper(hashA[7:]) + "\n", 1, "credential"},
		{"not hex", "ops admin sha256:" + strings.Repeat("z", 64) + "\n", 1, "credential"},
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
			_, line, err := Parse([]byte(tt.content))
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrFile))
			require.Equal(t, tt.line, line)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAuthFileLoadError(t *testing.T) {
	path := t.TempDir() + "/tokens"
	_, err := LoadFile(path)
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, path, fe.Path)
	require.False(t, errors.Is(err, ErrFile), "missing, not malformed")
}

func TestAuthTokenLookup(t *testing.T) {
	toks, _, err := Parse([]byte("a admin " + hashA + "\nb read " + HashToken("b") + "\nb read " + scramLine(t, SCRAMSHA256, "b", "b") + "\n"))
	require.NoError(t, err)
	ts := NewSet(toks)
	require.Equal(t, "a", ts.Bearer("a").Name)
	require.Equal(t, "b", ts.Bearer("b").Name)
	require.Nil(t, ts.Bearer("c"))
	require.Nil(t, ts.Bearer(""))
	require.Nil(t, ts.Bearer(hashA), "the hash is not the token")
	require.Equal(t, 3, ts.Len())
}

// formatAuthFile writes tokens back in the file's format.
func formatAuthFile(toks []Token) string {
	var b strings.Builder
	for _, tok := range toks {
		b.WriteString(tok.Name + " " + tok.Role.String() + " ")
		if tok.SCRAM != nil {
			b.WriteString(tok.SCRAM.String())
		} else {
			b.WriteString("sha256:")
			const hexdigits = "0123456789abcdef"
			for _, c := range tok.Hash {
				b.WriteByte(hexdigits[c>>4])
				b.WriteByte(hexdigits[c&15])
			}
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
	f.Add([]byte("ops admin " + hashA + "\nops admin " + scramSeed256 + "\n"))
	f.Add([]byte("ops admin scram-sha-512:4096:AAAAAAAAAAAAAAAAAAAAAA==:x:y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, line, err := Parse(data)
		if err != nil {
			require.True(t, errors.Is(err, ErrFile))
			require.GreaterOrEqual(t, line, 0)
			require.LessOrEqual(t, line, strings.Count(string(data), "\n")+1)
			return
		}
		require.NotEmpty(t, toks)
		again, _, err := Parse(data)
		require.NoError(t, err)
		require.Equal(t, toks, again)
		for _, tok := range toks {
			require.True(t, validTokenName(tok.Name))
			require.True(t, tok.Role >= RoleRead && tok.Role <= RoleAdmin)
			if c := tok.SCRAM; c != nil {
				require.Len(t, c.StoredKey, c.Mechanism.size())
				require.Len(t, c.ServerKey, c.Mechanism.size())
				require.True(t, c.Iterations >= MinSCRAMIterations && c.Iterations <= MaxSCRAMIterations)
			}
			for _, p := range tok.Prefixes {
				require.True(t, validPrefix(p))
			}
		}
		round, _, err := Parse([]byte(formatAuthFile(toks)))
		require.NoError(t, err)
		require.Equal(t, toks, round)
	})
}

// scramSeed256 is a SCRAM-SHA-256 credential field of the valid form
// (16-byte salt, 32-byte keys, all zero): it parses, and no secret
// matches it.
const scramSeed256 = "scram-sha-256:4096:AAAAAAAAAAAAAAAAAAAAAA==:" +
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

// scramLine makes the credential field of name's secret for m.
func scramLine(t testing.TB, m SCRAMMechanism, name, secret string) string {
	t.Helper()
	c, err := NewSCRAMCredential(m, name, secret, MinSCRAMIterations)
	require.NoError(t, err)
	return c.String()
}

// The SCRAM form of the credential field, and its refusals.
func TestAuthFileSCRAM(t *testing.T) {
	l256, l512 := scramLine(t, SCRAMSHA256, "app", "tok"), scramLine(t, SCRAMSHA512, "app", "tok")
	toks, line, err := Parse([]byte("app write " + HashToken("tok") + " pay\napp write " + l256 + " pay\napp\twrite\t" + l512 + "\tpay\n"))
	require.NoError(t, err, "line %d", line)
	require.Len(t, toks, 3)
	require.Nil(t, toks[0].SCRAM)
	require.Equal(t, SCRAMSHA256, toks[1].SCRAM.Mechanism)
	require.Equal(t, SCRAMSHA512, toks[2].SCRAM.Mechanism)
	require.Equal(t, l512, toks[2].SCRAM.String(), "written back the same")
	require.Equal(t, []string{"pay"}, toks[2].Prefixes)

	good := strings.Split(l256, ":") // scram-sha-256 ITER SALT STORED SERVER
	field := func(i int, v string) string {
		p := append([]string(nil), good...)
		p[i] = v
		return strings.Join(p, ":")
	}
	tests := []struct {
		name, content string
		line          int
		want          string
	}{
		{"three parts", "app write scram-sha-256:4096:a:b\n", 1, "3 parts"},
		{"six parts", "app write " + l256 + ":x\n", 1, "5 parts"},
		{"iterations low", "app write " + field(1, "4095") + "\n", 1, "iterations"},
		{"iterations high", "app write " + field(1, "1000001") + "\n", 1, "iterations"},
		{"iterations +", "app write " + field(1, "+4096") + "\n", 1, "iterations"},
		{"iterations leading zero", "app write " + field(1, "04096") + "\n", 1, "iterations"},
		{"salt short", "app write " + field(2, "AAAA") + "\n", 1, "salt"},
		{"salt not base64", "app write " + field(2, "!!!!!!!!!!!!!!!!!!!!!!!!") + "\n", 1, "salt"},
		{"salt unpadded", "app write " + field(2, "AAAAAAAAAAAAAAAAAAAAAA") + "\n", 1, "salt"},
		{"stored key short", "app write " + field(3, "AAAA") + "\n", 1, "stored key"},
		{"server key of sha-512 size", "app write " + field(4, good[3]+good[3]) + "\n", 1, "server key"},
		{"512 keys for 256", "app write scram-sha-256:" + strings.TrimPrefix(l512, "scram-sha-512:") + "\n", 1, "stored key"},
		{"upper-case prefix", "app write SCRAM-SHA-256:" + strings.TrimPrefix(l256, "scram-sha-256:") + "\n", 1, "credential"},
		{"sha-1", "app write scram-sha-1:" + strings.TrimPrefix(l256, "scram-sha-256:") + "\n", 1, "credential"},
		{"two of a kind", "app write " + l256 + "\napp write " + scramLine(t, SCRAMSHA256, "app", "x") + "\n", 2, "already used on line 1"},
		{"same credential twice", "app write " + l256 + "\nb write " + l256 + "\n", 2, "same token as line 1"},
		{"lines disagree on role", "app write " + HashToken("x") + "\napp read " + l256 + "\n", 2, "another role or prefixes on line 1"},
		{"lines disagree on prefixes", "app write " + HashToken("x") + " a\napp write " + l256 + " b\n", 2, "another role or prefixes on line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, line, err := Parse([]byte(tt.content))
			require.ErrorIs(t, err, ErrFile)
			require.Equal(t, tt.line, line)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAuthNewSCRAMCredentialRefusals(t *testing.T) {
	for _, it := range []int{1, MinSCRAMIterations - 1, MaxSCRAMIterations + 1} {
		_, err := NewSCRAMCredential(SCRAMSHA256, "a", "tok", it)
		require.ErrorIs(t, err, ErrSCRAMCredential)
	}
	_, err := NewSCRAMCredential(SCRAMSHA256, "a", "", 0)
	require.ErrorIs(t, err, ErrSCRAMCredential)
	_, err = NewSCRAMCredential(0, "a", "tok", 0)
	require.ErrorIs(t, err, ErrSCRAMCredential)
	c, err := NewSCRAMCredential(SCRAMSHA512, "a", "tok", 0)
	require.NoError(t, err)
	require.Equal(t, DefaultSCRAMIterations, c.Iterations)
}
