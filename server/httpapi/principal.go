package httpapi

import (
	"context"
	"net/http"
)

// tokenKey is the request context's key of the token a request was
// authorized with (requireRole).
type tokenKey struct{}

// withToken is ctx carrying tok, the token requireRole authorized a
// request with.
func withToken(ctx context.Context, tok *Token) context.Context {
	return context.WithValue(ctx, tokenKey{}, tok)
}

// tokenName is the name of the token r was authorized with, "" when it
// has none (no auth file, or an open route): the principal the events
// stream's per-principal bound counts (explorer.Config.Principal).
func tokenName(r *http.Request) string {
	if tok, _ := r.Context().Value(tokenKey{}).(*Token); tok != nil {
		return tok.Name
	}
	return ""
}
