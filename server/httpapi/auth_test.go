package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/server/auth"
)

// Tokens of the tests' auth file: one per role, and an admin limited to
// topics starting with "pay".
const (
	tokenRead     = "read-secret-0123456789abcdef"
	tokenWrite    = "write-secret-0123456789abcdef"
	tokenAdmin    = "admin-secret-0123456789abcdef"
	tokenPayAdmin = "payadmin-secret-0123456789abcdef"
)

// writeAuthFile writes the tests' auth file and returns its path.
func writeAuthFile(t *testing.T) string {
	t.Helper()
	content := "# name role hash [prefixes]\n" +
		"reader read " + auth.HashToken(tokenRead) + "\n" +
		"writer\twrite\t" + auth.HashToken(tokenWrite) + "\n" +
		"\n" +
		"ops admin " + auth.HashToken(tokenAdmin) + "\n" +
		"payments admin " + auth.HashToken(tokenPayAdmin) + " pay,billing.\n"
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// wantRoles is the rule of docs/security.md § Authentication and roles, by operation: what
// each route needs. A route missing here fails TestAuthRouteTableRoles,
// so a new route must be placed in the rule.
var wantRoles = map[string]Role{
	"getHealth": RoleOpen, "getReady": RoleOpen, "getOpenAPI": RoleOpen, "getDocs": RoleOpen, "listDocPages": RoleOpen, "getDocPage": RoleOpen,
	"getCluster": RoleRead, "listTopics": RoleRead, "getTopic": RoleRead, "getTopicConfig": RoleRead, "fetchRecords": RoleRead, "getPartitionOffsets": RoleRead,
	"listConsumerOffsets": RoleRead, "getConsumerOffset": RoleRead, "getJournal": RoleRead, "getQuarantinedRecords": RoleRead, "getMetrics": RoleRead,
	"listClusterNodes": RoleRead, "addClusterNode": RoleAdmin, "removeClusterNode": RoleAdmin,
	"produceRecords": RoleWrite, "commitConsumerOffset": RoleWrite, "createProducer": RoleWrite,
	"stopBroker": RoleAdmin, "startBroker": RoleAdmin, "reopenBroker": RoleAdmin, "createTopic": RoleAdmin, "deleteTopicAndRecords": RoleAdmin,
	"alterTopicConfig": RoleAdmin, "updateTopic": RoleAdmin,
	"resetConsumerOffset": RoleAdmin, "failoverPartition": RoleAdmin, "catchUpReplica": RoleAdmin,
	"recoverReplica": RoleAdmin, "moveLeaderToReplica": RoleAdmin,
	"heartbeatGroup": RoleWrite, "commitGroupOffset": RoleWrite, "listGroups": RoleRead, "describeGroup": RoleRead,
	"deleteGroupOffsets": RoleAdmin,
	"getExplorer":        RoleOpen, "getExplorerFile": RoleOpen, "streamEvents": RoleRead, "getController": RoleRead, "setController": RoleAdmin,
}

// routeRequest builds a request for rt with every path parameter filled
// in (topic: topicName), the body and headers a program sends, and token.
func routeRequest(rt route, topicName, token string) *http.Request {
	path := rt.Path
	for name, v := range map[string]string{"{topic}": topicName, "{p}": "0", "{id}": "1", "{broker}": "2", "{group}": "billing"} {
		path = strings.ReplaceAll(path, name, v)
	}
	if strings.HasPrefix(rt.Path, "/api/consumers/") {
		path = strings.Replace(path, "/api/consumers/1/", "/api/consumers/billing/", 1)
	}
	var body *bytes.Reader
	if rt.Operation.RequestBody != nil {
		body = bytes.NewReader([]byte(`{}`))
	} else {
		body = bytes.NewReader(nil)
	}
	method := rt.Method
	if rt.Path == "/api/events" {
		// The stream never ends by itself; its HEAD passes the same
		// checks and answers at once.
		method = http.MethodHead
	}
	path = strings.ReplaceAll(path, "{file}", "explorer.js")
	r := apitest.LocalRequest(method, path, body)
	if rt.Operation.RequestBody != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set(IntentHeader, "1")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func serve(s *testServer, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, r)
	return rec
}

// withoutRequestID drops the request id, the one part of two error
// answers that always differs.
var requestIDField = regexp.MustCompile(`"request_id":"[^"]*"`)

func withoutRequestID(b string) string { return requestIDField.ReplaceAllString(b, "") }

// docs/security.md § Authentication and roles: every route of the table says what it needs,
// and the server enforces it: 401 with a Bearer challenge without a valid
// token, 403 with too small a role or a topic outside the token's
// prefixes, the same 403 whether the topic exists or not.
func TestAuthRouteTableRoles(t *testing.T) {
	cfg := defaults()
	cfg.AuthFile = writeAuthFile(t)
	s, _ := newTestServer(t, cfg)
	require.NoError(t, s.Cluster().CreateTopic("orders", 1, 2))
	require.NoError(t, s.Cluster().CreateTopic("payments", 1, 2))

	tokenOf := map[Role]string{RoleRead: tokenRead, RoleWrite: tokenWrite, RoleAdmin: tokenAdmin}
	seen := map[string]bool{}
	for _, rt := range s.routes {
		id := rt.Operation.OperationID
		want, ok := wantRoles[id]
		require.True(t, ok, "route %s %s (%s) is not in the rule", rt.Method, rt.Path, id)
		require.Equal(t, want, rt.Role, "%s %s", rt.Method, rt.Path)
		seen[id] = true
		t.Run(id, func(t *testing.T) {
			if rt.Role == RoleOpen {
				rec := serve(s, routeRequest(rt, "orders", ""))
				require.NotEqual(t, http.StatusUnauthorized, rec.Code)
				require.NotEqual(t, http.StatusForbidden, rec.Code)
				return
			}
			for _, token := range []string{"", "not-a-token"} {
				rec := serve(s, routeRequest(rt, "orders", token))
				require.Equal(t, http.StatusUnauthorized, rec.Code, "token %q: %s", token, rec.Body)
				require.True(t, strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer "))
				require.Equal(t, CodeUnauthenticated, apitest.DecodeError(t, rec.Result()).Code)
			}
			for role := RoleRead; role <= RoleAdmin; role++ {
				rec := serve(s, routeRequest(rt, "orders", tokenOf[role]))
				if role < rt.Role {
					require.Equal(t, http.StatusForbidden, rec.Code, "role %s: %s", role, rec.Body)
					require.Equal(t, CodePermissionDenied, apitest.DecodeError(t, rec.Result()).Code)
				} else {
					require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, rec.Code, "role %s: %s", role, rec.Body)
				}
			}
			if rt.TopicFree {
				// Reaches no topic: the prefix-limited admin may call it.
				rec := serve(s, routeRequest(rt, "orders", tokenPayAdmin))
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, rec.Code, rec.Body.String())
				return
			}
			// The prefix-limited admin: outside its prefixes a topic that
			// exists and one that does not answer the same 403.
			exists := serve(s, routeRequest(rt, "orders", tokenPayAdmin))
			missing := serve(s, routeRequest(rt, "nope", tokenPayAdmin))
			require.Equal(t, http.StatusForbidden, exists.Code, exists.Body.String())
			require.Equal(t, http.StatusForbidden, missing.Code)
			require.Equal(t, withoutRequestID(exists.Body.String()), withoutRequestID(missing.Body.String()))
			if strings.Contains(rt.Path, "{topic}") {
				// Inside them it may: a missing topic is then a plain 404.
				rec := serve(s, routeRequest(rt, "payments-nope", tokenPayAdmin))
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, rec.Code, rec.Body.String())
			}
		})
	}
	require.Len(t, seen, len(wantRoles), "every operation of the rule is a route")
}

// New refuses a route table with a route that forgot its role.
func TestAuthRouteWithoutRoleRefused(t *testing.T) {
	err := checkRoles([]route{{Method: http.MethodGet, Path: "/api/new"}})
	require.ErrorContains(t, err, "GET /api/new has no role")
}

// Without an auth file (on loopback) every route is open, as before: the
// README's curl tour sends no token.
func TestAuthOffWithoutFile(t *testing.T) {
	s, _ := newTestServer(t, defaults())
	rec := serve(s, apitest.LocalRequest(http.MethodGet, "/api/cluster", nil))
	require.Equal(t, http.StatusOK, rec.Code)
}

func TestAuthBearerHeader(t *testing.T) {
	tests := []struct {
		header        []string
		secret        string
		ok, malformed bool
	}{
		{nil, "", false, false},
		{[]string{"Bearer abc"}, "abc", true, false},
		{[]string{"bearer  abc"}, "abc", true, false},
		{[]string{"Basic abc"}, "", false, true},
		{[]string{"Bearer"}, "", false, true},
		{[]string{"Bearer a b"}, "", false, true},
		{[]string{"Bearer a", "Bearer b"}, "", false, true},
	}
	for _, tt := range tests {
		r := apitest.LocalRequest(http.MethodGet, "/", nil)
		for _, h := range tt.header {
			r.Header.Add("Authorization", h)
		}
		secret, ok, malformed := bearer(r)
		require.Equal(t, tt.secret, secret, "%q", tt.header)
		require.Equal(t, tt.ok, ok, "%q", tt.header)
		require.Equal(t, tt.malformed, malformed, "%q", tt.header)
	}
}

// The error body of a 401 says how to send a token.
func TestAuthUnauthenticatedBody(t *testing.T) {
	cfg := defaults()
	cfg.AuthFile = writeAuthFile(t)
	s, _ := newTestServer(t, cfg)
	rec := serve(s, apitest.LocalRequest(http.MethodGet, "/api/cluster", nil))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, `Bearer realm="pystream"`, rec.Header().Get("WWW-Authenticate"))
	var body ErrorResponse
	require.NoError(t, json.NewDecoder(rec.Body).Decode(&body))
	require.Equal(t, CodeUnauthenticated, body.Error.Code)
	require.Contains(t, body.Error.Message, "Authorization: Bearer")
	// Health and readiness stay open.
	require.Equal(t, http.StatusOK, serve(s, apitest.LocalRequest(http.MethodGet, "/api/health", nil)).Code)
}

// The document says what the server enforces: every route with a role
// asks for the bearer token and names the role (x-pystream-role), open
// routes ask for none, and the 401 and 403 examples are the server's own
// answers word for word (403: a read token on a write or admin route).
func TestOpenAPIAuthMatchesTheServer(t *testing.T) {
	cfg := defaults()
	cfg.AuthFile = writeAuthFile(t)
	s, _ := newTestServer(t, cfg)
	require.NoError(t, s.Cluster().CreateTopic("orders", 1, 2))
	var doc struct {
		Paths map[string]map[string]struct {
			Security  []map[string][]string `json:"security"`
			Role      string                `json:"x-pystream-role"`
			Responses map[string]struct {
				Content map[string]struct {
					Example ErrorResponse `json:"example"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			SecuritySchemes map[string]map[string]string `json:"securitySchemes"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(s.openapi, &doc))
	require.Equal(t, "bearer", doc.Components.SecuritySchemes[bearerScheme]["scheme"])
	for _, rt := range s.routes {
		op := doc.Paths[openAPIPath(rt.Path)][strings.ToLower(rt.Method)]
		if rt.Role == RoleOpen {
			require.Empty(t, op.Security, "%s %s: open", rt.Method, rt.Path)
			require.Empty(t, op.Role)
			continue
		}
		require.Equal(t, []map[string][]string{{bearerScheme: {}}}, op.Security, "%s %s", rt.Method, rt.Path)
		require.Equal(t, rt.Role.String(), op.Role)
		rec := serve(s, routeRequest(rt, "orders", ""))
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		require.Equal(t, op.Responses["401"].Content[mediaJSON].Example.Error.Message, apitest.DecodeError(t, rec.Result()).Message)
		if rt.Role > RoleRead {
			rec := serve(s, routeRequest(rt, "orders", tokenRead))
			require.Equal(t, http.StatusForbidden, rec.Code)
			require.Equal(t, op.Responses["403"].Content[mediaJSON].Example.Error.Message, apitest.DecodeError(t, rec.Result()).Message)
		}
	}
}
