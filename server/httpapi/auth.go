package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
)

// Authentication and roles (docs/security.md): with an auth file, every
// route but the open ones needs a bearer token whose role is at least the
// route's (route.Role, in the route table) and, for a token limited to
// topic prefixes, a route about one topic (a {topic} in its path) under one
// of them. The decision is the pure function authorize; requireRole is the
// handler wrapper New puts around every route.

// Error codes of authentication and authorization.
const (
	CodeUnauthenticated  = apiclient.CodeUnauthenticated
	CodePermissionDenied = apiclient.CodePermissionDenied
)

// authRealm is the realm of the WWW-Authenticate challenge.
const authRealm = "pystream"

// tokenSet is the parsed auth file. Read-only once built: safe for
// concurrent use.
type tokenSet struct {
	tokens []Token
}

// lookup returns the token whose hash is the hash of secret, or nil. It
// compares with every token in constant time and never stops early, so the
// time it takes says nothing about which token, or how much of one,
// matched.
func (ts *tokenSet) lookup(secret string) *Token {
	sum := sha256.Sum256([]byte(secret))
	var found *Token
	for i := range ts.tokens {
		if subtle.ConstantTimeCompare(sum[:], ts.tokens[i].Hash[:]) == 1 {
			found = &ts.tokens[i]
		}
	}
	return found
}

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
// topic named in the request's path ("" when the route has none). It never
// looks at whether the topic exists: a topic outside the token's prefixes
// is refused the same way whether it exists or not.
func authorize(rt *route, tok *Token, topicName string, presented, malformed bool) *denial {
	if rt.Role == RoleOpen {
		return nil
	}
	if tok == nil {
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
	}
	if tok.Role < rt.Role {
		return &denial{status: http.StatusForbidden, code: CodePermissionDenied,
			message: fmt.Sprintf("token %q has role %s; %s %s needs %s", tok.Name, tok.Role, rt.Method, rt.Path, rt.Role)}
	}
	if len(tok.Prefixes) == 0 {
		return nil
	}
	if !strings.Contains(rt.Path, "{topic}") {
		return &denial{status: http.StatusForbidden, code: CodePermissionDenied,
			message: fmt.Sprintf("token %q is limited to topic prefixes; %s %s is not about one topic", tok.Name, rt.Method, rt.Path)}
	}
	for _, p := range tok.Prefixes {
		if strings.HasPrefix(topicName, p) {
			return nil
		}
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
			tok = a.auth.lookup(secret)
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
