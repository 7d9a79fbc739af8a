package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDotEnvParse(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []dotEnvEntry
	}{
		{"empty file", "", nil},
		{"comments and blank lines", "# comment\n\n   \n  # indented comment\n", nil},
		{"plain", "A=1\nB=two\n", []dotEnvEntry{{"A", "1", 1}, {"B", "two", 2}}},
		{"no trailing newline", "A=1", []dotEnvEntry{{"A", "1", 1}}},
		{"crlf", "A=1\r\nB=2\r\n", []dotEnvEntry{{"A", "1", 1}, {"B", "2", 2}}},
		{"spaces around", "  A = 1  \n", []dotEnvEntry{{"A", "1", 1}}},
		{"export", "export A=1\n", []dotEnvEntry{{"A", "1", 1}}},
		{"empty value", "A=\n", []dotEnvEntry{{"A", "", 1}}},
		{"inline comment", "A=1 # the port\n", []dotEnvEntry{{"A", "1", 1}}},
		{"hash inside value", "A=a#b\n", []dotEnvEntry{{"A", "a#b", 1}}},
		{"equals inside value", "A=x=y\n", []dotEnvEntry{{"A", "x=y", 1}}},
		{"double quoted", `A="a b # not a comment"` + "\n", []dotEnvEntry{{"A", "a b # not a comment", 1}}},
		{"double quoted escapes", `A="q\"\\\n\t\r\x"`, []dotEnvEntry{{"A", "q\"\\\n\t\r\\x", 1}}},
		{"double quoted then comment", `A="v"  # c`, []dotEnvEntry{{"A", "v", 1}}},
		{"single quoted literal", `A='$HOME \n "x"'`, []dotEnvEntry{{"A", `$HOME \n "x"`, 1}}},
		{"later wins is left to the reader", "A=1\nA=2\n", []dotEnvEntry{{"A", "1", 1}, {"A", "2", 2}}},
		{"line numbers count skipped lines", "# c\n\nA=1\n", []dotEnvEntry{{"A", "1", 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDotEnv([]byte(tt.input))
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestDotEnvParseMalformed(t *testing.T) {
	tests := []struct {
		name  string
		input string
		line  int
	}{
		{"no equals", "A=1\nJUSTAWORD\n", 2},
		{"empty key", "=1\n", 1},
		{"key with space", "MY KEY=1\n", 1},
		{"key starts with digit", "1A=1\n", 1},
		{"key with dash", "A-B=1\n", 1},
		{"unterminated double quote", "A=\"abc\n", 1},
		{"unterminated single quote", "A='abc\n", 1},
		{"text after double quote", "A=\"abc\" def\n", 1},
		{"text after single quote", "A='abc' def\n", 1},
		{"multi-line value is not supported", "A=\"line one\nline two\"\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDotEnv([]byte(tt.input))
			require.ErrorIs(t, err, ErrMalformedDotEnv)
			var de *DotEnvError
			require.ErrorAs(t, err, &de)
			require.Equal(t, tt.line, de.Line)
			require.NotEmpty(t, de.Reason)
			require.Nil(t, got)
		})
	}
}

// quoteDotEnv writes v as a double-quoted .env value.
func quoteDotEnv(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(v) + `"`
}

// FuzzDotEnvParse: the parser never panics; every key it returns is a valid
// name on a line that exists; and writing the entries back out (quoted)
// parses to the same keys and values.
func FuzzDotEnvParse(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("PYSTREAM_PORT=8000\n"))
	f.Add([]byte("# c\nexport A=\"x\\\"y\" # c\nB='lit'\nC=v # c\n"))
	f.Add([]byte("A=\"unterminated\n"))
	f.Add([]byte("\r\n=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseDotEnv(data)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformedDotEnv)
			require.Nil(t, entries)
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		var out strings.Builder
		for _, e := range entries {
			require.True(t, validEnvKey(e.Key), "key %q", e.Key)
			require.True(t, e.Line >= 1 && e.Line <= lines, "line %d of %d", e.Line, lines)
			out.WriteString(e.Key + "=" + quoteDotEnv(e.Value) + "\n")
		}
		again, err := parseDotEnv([]byte(out.String()))
		require.NoError(t, err, "re-encoded: %s", strconv.Quote(out.String()))
		require.Len(t, again, len(entries))
		for i := range entries {
			require.Equal(t, entries[i].Key, again[i].Key)
			require.Equal(t, entries[i].Value, again[i].Value)
		}
	})
}
