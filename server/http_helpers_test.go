package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/httpapi"
)

// Helpers for the end-to-end tests that read the HTTP API's answers and
// log lines as a client and an operator would.

// localRequest is a request as a client on this machine sends it.
func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8000"
	return r
}

// decodeError reads the standard JSON error body.
func decodeError(t *testing.T, resp *http.Response) apiclient.ErrorBody {
	t.Helper()
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var body apiclient.ErrorResponse
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&body))
	return body.Error
}

// logLine is the JSON log line of request id with message msg.
func logLine(t *testing.T, logs, id, msg string) map[string]any {
	t.Helper()
	for _, raw := range strings.Split(strings.TrimSpace(logs), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(raw), &l) == nil && l["request_id"] == id && l["msg"] == msg {
			return l
		}
	}
	require.Failf(t, "no such log line", "request_id %s, msg %q in:\n%s", id, msg, logs)
	return nil
}

// packagePrefix finds a library's error prefix ("cluster: ", "log: ") at
// the start of a message or of one of its parts: an answer must have none.
var packagePrefix = regexp.MustCompile(`(^|: |; |\()(cluster|log|topic|client|durable|logtest|server): `)

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
	require.NoError(t, os.WriteFile(path, []byte("reader read "+httpapi.HashToken(tokenRead)+"\n"), 0o600))
	return path
}

func ptr[T any](v T) *T { return &v }
