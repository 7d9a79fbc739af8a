package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xdg-go/scram"

	"github.com/pystream/pystream/server/auth"
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

// docs/security.md § Kafka clients: pystream auth scram prints, from a token on
// stdin, one auth-file line per SCRAM mechanism; the server's parser
// accepts them beside the token's sha256 line, and a SCRAM client with
// the token as its password authenticates against them. Bad arguments
// are usage errors (exit 2).
func TestCLIAuthSCRAM(t *testing.T) {
	const token = "app-0123456789abcdef0123456789abcdef"
	r := run(t, "", token+"\n", "auth", "scram", "--iterations", "4096", "app", "write", "pay.")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2)
	require.Regexp(t, `^app write scram-sha-256:4096:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+ pay\.$`, lines[0])
	require.Regexp(t, `^app write scram-sha-512:4096:`, lines[1])
	require.NotContains(t, r.stdout, token)

	h := run(t, "", token+"\n", "auth", "hash")
	require.Equal(t, 0, h.code, h.stderr)
	toks, line, err := auth.Parse([]byte("app write " + strings.TrimSpace(h.stdout) + " pay.\n" + r.stdout))
	require.NoError(t, err, "line %d", line)
	set := auth.NewSet(toks)
	for _, c := range []struct {
		mech string
		hash scram.HashGeneratorFcn
	}{{auth.MechanismSCRAMSHA256, scram.SHA256}, {auth.MechanismSCRAMSHA512, scram.SHA512}} {
		cl, err := c.hash.NewClient("app", token, "")
		require.NoError(t, err)
		conv := cl.NewConversation()
		srv, err := set.NewSASL(c.mech)
		require.NoError(t, err)
		msg, err := conv.Step("")
		require.NoError(t, err)
		for !srv.Done() {
			out, err := srv.Step([]byte(msg))
			require.NoError(t, err, c.mech)
			msg, err = conv.Step(string(out))
			require.NoError(t, err)
		}
		require.Equal(t, "app", srv.Principal().Name)
	}

	r = run(t, "", token+"\n", "auth", "scram", "--mechanism", "SCRAM-SHA-512", "ops", "admin")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stdout, "\n"))
	require.Contains(t, r.stdout, "ops admin scram-sha-512:8192:")

	for _, args := range [][]string{
		{"auth", "scram", "app", "root"},
		{"auth", "scram", "--mechanism", "SCRAM-SHA-1", "app", "read"},
		{"auth", "scram", "--iterations", "100", "app", "read"},
		{"auth", "scram", "app"},
	} {
		r = run(t, "", token+"\n", args...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
	}
	r = run(t, "", "", "auth", "scram", "app", "read")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "no token on stdin")
}
