// Package apitest is test support for reading PyStream's HTTP API as a
// client and an operator do: a request from this machine, the JSON error
// body of an answer, the log line of a request id, and a log destination
// the server's goroutines may share. The API's own tests (server/httpapi)
// and the server's end-to-end tests (package server) both use it. It is
// never linked into a program.
package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// LocalRequest is a request as a client on this machine sends it: its Host
// is a loopback address, which the API's browser rules accept.
func LocalRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8000"
	return r
}

// DecodeError reads the standard JSON error body of resp, refusing an
// unknown field.
func DecodeError(t testing.TB, resp *http.Response) apiclient.ErrorBody {
	t.Helper()
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var body apiclient.ErrorResponse
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&body))
	return body.Error
}

// APIErr asserts that err is an *apiclient.Error with the given status
// and code, and returns it.
func APIErr(t testing.TB, err error, status int, code string) *apiclient.Error {
	t.Helper()
	var e *apiclient.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, status, e.Status, e.Message)
	require.Equal(t, code, e.Code, e.Message)
	return e
}

// LogLine is the JSON log line of request id whose message is msg, in
// logs; the test fails when there is none.
func LogLine(t testing.TB, logs, id, msg string) map[string]any {
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

// PackagePrefix finds a library's error prefix ("cluster: ", "log: ") at
// the start of a message or of a part of it: an answer must have none.
var PackagePrefix = regexp.MustCompile(`(^|: |; |\()(cluster|log|topic|client|durable|logtest|server): `)

// SyncBuffer is a log destination safe for the server's goroutines.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
