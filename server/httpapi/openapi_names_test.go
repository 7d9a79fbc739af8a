package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// generatedNames are the Go identifiers oapi-codegen (v2, default settings)
// declares for an operation whose id, capitalised, is op: its types for
// the client, the strict server and the request body, and its request
// and response functions.
func generatedNames(op string) []string {
	return []string{op, op + "Params", op + "JSONBody", op + "JSONRequestBody", op + "Response",
		op + "RequestObject", op + "ResponseObject", "New" + op + "Request", "New" + op + "RequestWithBody",
		"Parse" + op + "Response", op + "WithResponse", op + "WithBody"}
}

// docs/phase-6-network-api.md § Documentation pages: every operation,
// HEAD included, has an id of its own, in lower camel case, and none of
// the names a generator derives from it is a schema's name or another
// operation's name. The generator test (TestOpenAPIGeneratedGoClient) is
// the proof; this is the same rule without the network.
func TestOpenAPIOperationIDsDoNotCollide(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	var doc document
	require.NoError(t, json.Unmarshal(s.openapi, &doc))

	owner := map[string]string{} // Go identifier: what declares it
	for name := range doc.Components.Schemas {
		owner[name] = "schema " + name
	}
	lowerCamel := regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)
	ops := 0
	for path, item := range doc.Paths {
		for method, op := range item {
			where := strings.ToUpper(method) + " " + path
			require.Regexp(t, lowerCamel, op.OperationID, where)
			goName := strings.ToUpper(op.OperationID[:1]) + op.OperationID[1:]
			for _, n := range generatedNames(goName) {
				if prev, ok := owner[n]; ok {
					t.Errorf("%s: operation %s makes %s, already %s", where, op.OperationID, n, prev)
				}
				owner[n] = "from operation " + op.OperationID
			}
			ops++
		}
	}
	require.Equal(t, len(s.routes)+len(headRoutes(s.routes)), ops, "every route and the HEAD of every GET")
}

// headRoutes are the routes that also answer HEAD.
func headRoutes(routes []route) []route {
	var out []route
	for _, r := range routes {
		if r.Method == http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

// Every GET route answers HEAD with the GET's status and no body, as the
// document's HEAD operations say.
func TestOpenAPIHeadServed(t *testing.T) {
	r := startServer(t, t.TempDir(), 3)
	var doc document
	require.NoError(t, json.Unmarshal(r.srv.openapi, &doc))
	hc := &http.Client{}
	t.Cleanup(hc.CloseIdleConnections)
	for _, path := range []string{"/api/health", "/api/ready", "/api/cluster", "/api/topics", "/api/topics/nope",
		"/api/topics/a%20b", "/api/journal", "/api/journal?max=0", "/metrics", "/openapi.json", "/docs",
		"/explorer", "/explorer/explorer.js", "/explorer/nope.js", "/api/events", "/api/events?tail=x", "/api/controller"} {
		get, err := hc.Get(r.base + path)
		require.NoError(t, err)
		require.NoError(t, get.Body.Close())
		head, err := hc.Head(r.base + path)
		require.NoError(t, err)
		body, err := io.ReadAll(head.Body)
		require.NoError(t, err)
		require.NoError(t, head.Body.Close())
		require.Equal(t, get.StatusCode, head.StatusCode, path)
		require.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"), path)
		require.Empty(t, body, "HEAD %s has no body", path)
	}
	for p, item := range doc.Paths {
		if get, ok := item["get"]; ok {
			head := item["head"]
			require.NotNil(t, head, "HEAD %s documented", p)
			require.Equal(t, headOperationID(get.OperationID), head.OperationID)
			require.Equal(t, len(get.Responses), len(head.Responses), p)
			for code, resp := range head.Responses {
				require.Empty(t, resp.Content, "HEAD %s %s has no body", p, code)
			}
		}
	}
	require.Equal(t, "headTopic", headOperationID("getTopic"))
	require.Equal(t, "headListTopics", headOperationID("listTopics"))
	require.Equal(t, "headFetchRecords", headOperationID("fetchRecords"))
}

// The pattern, minLength and maxLength the document states for a topic
// name or consumer id accept exactly what topic.ValidateName accepts: every
// string of up to four characters over an alphabet with the allowed
// characters, "." and some refused ones, and lengths around the limit.
func TestOpenAPINamePatternIsValidateName(t *testing.T) {
	sch := nameSchema("")
	re := regexp.MustCompile(sch.Pattern)
	accepts := func(s string) bool {
		return re.MatchString(s) && len(s) >= *sch.MinLength && len(s) <= *sch.MaxLength
	}
	alphabet := []string{"a", "Z", "0", ".", "_", "-", " ", "/", "é", "+"}
	var all func(prefix string, n int)
	all = func(prefix string, n int) {
		err := topic.ValidateName(prefix)
		require.Equal(t, err == nil, accepts(prefix), "%q: ValidateName says %v", prefix, err)
		if err != nil {
			require.True(t, errors.Is(err, topic.ErrInvalidName))
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			all(prefix+c, n-1)
		}
	}
	all("", 4)
	for _, n := range []int{topic.MaxNameLength - 1, topic.MaxNameLength, topic.MaxNameLength + 1} {
		for _, s := range []string{strings.Repeat("a", n), strings.Repeat(".", n)} {
			require.Equal(t, topic.ValidateName(s) == nil, accepts(s), "length %d", n)
		}
	}
}
