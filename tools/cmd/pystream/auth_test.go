package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/security.md § Authentication and roles, through the real binaries: a server with an
// auth file, and the CLI with PYSTREAM_TOKEN or --token. 401 without a
// token, 403 with too small a role or outside the token's prefixes (the
// same answer for a topic that exists and one that does not).
func TestCLIAuthRoles(t *testing.T) {
	tokens := map[string]string{
		"reader": "reader-0123456789abcdef0123456789abcdef",
		"writer": "writer-0123456789abcdef0123456789abcdef",
		"ops":    "ops-0123456789abcdef0123456789abcdef",
		"payro":  "payro-0123456789abcdef0123456789abcdef",
	}
	hash := func(name string) string {
		r := run(t, "", tokens[name]+"\n", "auth", "hash")
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `^sha256:[0-9a-f]{64}\n$`, r.stdout)
		return strings.TrimSpace(r.stdout)
	}
	file := "reader read " + hash("reader") + "\n" +
		"writer write " + hash("writer") + "\n" +
		"ops admin " + hash("ops") + "\n" +
		"payro read " + hash("payro") + " pay\n"
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte(file), 0o600))
	url := startServer(t, 3, "PYSTREAM_AUTH_FILE="+path)

	as := func(who string, stdin string, args ...string) result {
		t.Helper()
		env := []string{"PYSTREAM_SERVER=" + url, "PYSTREAM_TOKEN=" + tokens[who]}
		return runEnv(t, env, stdin, args...)
	}
	denied := func(r result, code string) {
		t.Helper()
		require.Equal(t, 1, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
		require.Contains(t, r.stderr, "["+code+"]")
	}

	denied(as("", "", "topic", "list"), "unauthenticated")
	denied(as("reader", "", "topic", "create", "orders"), "permission_denied")
	denied(as("writer", "", "topic", "create", "orders"), "permission_denied")
	// --token wins over PYSTREAM_TOKEN.
	r := runEnv(t, []string{"PYSTREAM_SERVER=" + url, "PYSTREAM_TOKEN=" + tokens["reader"]}, "",
		"--token", tokens["ops"], "topic", "create", "orders", "-r", "2")
	require.Equal(t, 0, r.code, r.stderr)

	r = as("writer", "hello\n", "produce", "orders")
	require.Equal(t, 0, r.code, r.stderr)
	denied(as("reader", "hello\n", "produce", "orders"), "permission_denied")
	r = as("reader", "", "topic", "describe", "orders")
	require.Equal(t, 0, r.code, r.stderr)

	denied(as("writer", "", "broker", "stop", "3"), "permission_denied")
	r = as("ops", "", "broker", "stop", "3")
	require.Equal(t, 0, r.code, r.stderr)

	// The prefix-limited token: "orders" exists, "nope" does not; both
	// answer the same refusal.
	exists := as("payro", "", "topic", "describe", "orders")
	missing := as("payro", "", "topic", "describe", "nope")
	denied(exists, "permission_denied")
	denied(missing, "permission_denied")
	require.Equal(t, strings.ReplaceAll(exists.stderr, "orders", "nope"), missing.stderr)
	r = as("payro", "", "topic", "describe", "payments")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "[not_found]", "inside its prefixes a missing topic is a plain 404")

	// Health stays open; a raw request without a token is 401 with the
	// Bearer challenge.
	resp, err := http.Get(url + "/api/health")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Get(url + "/api/cluster")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
}

// The probe of issue's "any web page can stop a broker", against the real
// binary with no auth file: an empty cross-origin form POST is refused and
// broker 3 stays up; curl's body-less POST (no Origin) still works.
func TestCLIAuthCrossOriginFormPost(t *testing.T) {
	url := startServer(t, 3)
	req, err := http.NewRequest(http.MethodPost, url+"/api/brokers/3/stop", strings.NewReader(""))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	req, err = http.NewRequest(http.MethodGet, url+"/api/cluster", nil)
	require.NoError(t, err)
	req.Host = "evil.example:8000" // DNS rebinding
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	r := runEnv(t, []string{"PYSTREAM_SERVER=" + url}, "", "cluster", "status")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "stopped", "every broker is still up:\n%s", r.stdout)
	require.Equal(t, 3, strings.Count(r.stdout, "available"), r.stdout)
}
