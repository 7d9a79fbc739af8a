package server

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/auth"
)

// Helpers for the end-to-end tests: a server whose log lines a test reads,
// and an auth file with a reader's token.

// newTestServer builds a server for cfg whose log lines (JSON) go to the
// returned buffer.
func newTestServer(t *testing.T, cfg Config) (*Server, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	cfg.LogFormat = FormatJSON
	cfg.LogLevel = LogLevel(LevelDebug)
	if cfg.DataDir == Defaults().DataDir {
		cfg.DataDir = t.TempDir()
	}
	cfg.KafkaPort = 0 // no fixed ports in tests
	s, err := New(cfg, NewLogger(&logs, cfg))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	logs.Reset() // start-up lines are not requests
	return s, &logs
}

// tokenRead is the reader's token of writeAuthFile.
const tokenRead = "read-secret-0123456789abcdef"

// writeAuthFile writes an auth file with one token, tokenRead's, of role
// read, and returns its path.
func writeAuthFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte("reader read "+auth.HashToken(tokenRead)+"\n"), 0o600))
	return path
}

func ptr[T any](v T) *T { return &v }
