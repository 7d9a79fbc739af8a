package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/auth"
)

// Authentication and roles (docs/security.md): with an auth file, every
// route but the open ones needs a bearer token whose role is at least the
// route's (route.Role, in the route table) and, for a token limited to
// topic prefixes, a route about one topic (a {topic} in its path) under one
// of them. The decision is server/auth's (auth.Decide), worded for HTTP by authorize; requireRole is the
// handler wrapper New puts around every route.

// Error codes of authentication and authorization.
const (
	CodeUnauthenticated  = apiclient.CodeUnauthenticated
	CodePermissionDenied = apiclient.CodePermissionDenied
)

// authRealm is the realm of the WWW-Authenticate challenge.
const authRealm = "pystream"

// The roles, from the one copy of the rules (server/auth): a route's
// Role is one of them.
type (
	Role  = auth.Role
	Token = auth.Token
)

// The roles a route may need.
const (
	RoleOpen  = auth.RoleOpen
	RoleRead  = auth.RoleRead
	RoleWrite = auth.RoleWrite
	RoleAdmin = auth.RoleAdmin
)

// bearer returns the token of r's Authorization header: ok is false when
// there is none; malformed when there is something that is not exactly
// one "Bearer <token>".
func bearer(r *http.Request) (secret string, ok, malformed bool) {
	v := r.Header.Values("Authorization")
	if len(v) == 0 {
		return "", false, false
	}
	if len(v) > 1 {
		return "", false, true
	}
	scheme, secret, found := strings.Cut(v[0], " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false, true
	}
	secret = strings.TrimLeft(secret, " ")
	if secret == "" || strings.ContainsAny(secret, " \t") {
		return "", false, true
	}
	return secret, true, false
}

// denial is why authorize refuses a request: nil means allowed.
type denial struct {
	status  int
	code    string
	message string
	// challenge is the WWW-Authenticate value of a 401.
	challenge string
}

// authorize decides whether tok (nil: no valid token) may call rt for the
// topic named in the request's path ("" when the route has none), by the
// one rule of server/auth (auth.Decide), and words the refusal for HTTP.
func authorize(rt *route, tok *Token, topicName string, presented, malformed bool) *denial {
	d := auth.Decide(tok, rt.Role, topicName, strings.Contains(rt.Path, "{topic}"))
	if d == auth.DenyNotOneTopic && rt.TopicFree {
		d = auth.DenyNone // the role was enough
	}
	switch d {
	case auth.DenyNone:
		return nil
	case auth.DenyUnauthenticated:
		d := &denial{status: http.StatusUnauthorized, code: CodeUnauthenticated,
			challenge: fmt.Sprintf("Bearer realm=%q", authRealm)}
		switch {
		case malformed:
			d.message = "malformed Authorization header: send Authorization: Bearer <token>"
			d.challenge += `, error="invalid_request"`
		case presented:
			d.message = "unknown token"
			d.challenge += `, error="invalid_token"`
		default:
			d.message = fmt.Sprintf("%s %s needs a token with role %s: send Authorization: Bearer <token> (the CLI reads PYSTREAM_TOKEN or --token)",
				rt.Method, rt.Path, rt.Role)
		}
		return d
	case auth.DenyRole:
		return &denial{status: http.StatusForbidden, code: CodePermissionDenied,
			message: fmt.Sprintf("token %q has role %s; %s %s needs %s", tok.Name, tok.Role, rt.Method, rt.Path, rt.Role)}
	case auth.DenyNotOneTopic:
		return &denial{status: http.StatusForbidden, code: CodePermissionDenied,
			message: fmt.Sprintf("token %q is limited to topic prefixes; %s %s is not about one topic", tok.Name, rt.Method, rt.Path)}
	}
	// The topic is not named: the same answer for a topic that exists and
	// one that does not, and nothing long echoed back.
	return &denial{status: http.StatusForbidden, code: CodePermissionDenied,
		message: fmt.Sprintf("token %q may not reach this topic: it is limited to topics starting with %s",
			tok.Name, strings.Join(tok.Prefixes, ", "))}
}

// requireRole wraps rt's handler with the authorization check, when the
// server has an auth file. Without one it is the handler itself: every
// route is open, which New allows on a loopback address only
// (checkExposure).
func (a *API) requireRole(rt route) http.Handler {
	if a.auth == nil || rt.Role == RoleOpen {
		return rt.Handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, presented, malformed := bearer(r)
		var tok *Token
		if presented {
			tok = a.auth.Bearer(secret)
		}
		if d := authorize(&rt, tok, r.PathValue("topic"), presented, malformed); d != nil {
			if d.challenge != "" {
				w.Header().Set("WWW-Authenticate", d.challenge)
			}
			writeError(w, d.status, d.code, d.message)
			return
		}
		rt.Handler(w, r.WithContext(withToken(r.Context(), tok)))
	})
}

// checkRoles refuses a route table with a route that does not say which
// role it needs.
func checkRoles(routes []route) error {
	for _, rt := range routes {
		if rt.Role < RoleOpen || rt.Role > RoleAdmin {
			return fmt.Errorf("server: route %s %s has no role", rt.Method, rt.Path)
		}
	}
	return nil
}
