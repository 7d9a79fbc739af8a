package httpapi

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
)

// Browser-borne requests (docs/security.md, "What a browser can do"). A web
// page the operator visits can make the browser send requests to the
// server: form posts and no-cors fetches go out without a CORS preflight,
// and a page whose name the attacker re-points at 127.0.0.1 (DNS
// rebinding) even reads the answers. The rules, checked before any route:
//
//  1. The Host header must be one the server answers to: an IP address,
//     localhost (or a name under .localhost), PYSTREAM_HOST, or one of
//     PYSTREAM_ALLOWED_HOSTS. A rebinding page's Host is its own name.
//  2. Origin, when present, must be the server's own (scheme://Host) or
//     one of PYSTREAM_ALLOWED_ORIGINS, on every method. Browsers send
//     Origin with every POST, PUT and DELETE.
//  3. OPTIONS answers 204 with Allow; CORS headers only for an allowed
//     origin (none by default).
//
// and, per route (requireIntent), for a state-changing request:
//
//  4. a Content-Type other than application/json or
//     application/octet-stream is refused (415): that is every type a form
//     or a no-cors fetch can send;
//  5. a body-less request without Content-Type must carry
//     X-PyStream-Request, unless it carries no browser marker at all
//     (neither Origin nor Sec-Fetch-Site), which is curl or a program.

// IntentHeader is the header that marks a request as sent on purpose
// (apiclient.IntentHeader).
const IntentHeader = apiclient.IntentHeader

// hostName returns the name of a Host header value, without port or
// brackets, in lower case and without a final dot.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// isLoopbackName reports whether h names the loopback interface in a way
// no DNS answer can change: localhost, a name under .localhost (RFC 6761,
// which browsers resolve themselves), or a loopback IP address.
func isLoopbackName(h string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	return ip != nil && ip.IsLoopback()
}

// hostAllowed is rule 1. An empty Host (HTTP/1.0) is not a browser's.
func hostAllowed(cfg *Config, hostport string) bool {
	if hostport == "" {
		return true
	}
	h := hostName(hostport)
	if net.ParseIP(h) != nil || isLoopbackName(h) || h == hostName(cfg.Host) {
		return true
	}
	return slices.Contains(cfg.AllowedHosts, "*") || slices.Contains(cfg.AllowedHosts, h)
}

// originAllowed is rule 2, for a request that carries Origin: same origin
// (the scheme the request came in on, and its Host), or configured.
// crossOrigin is true for a configured origin that is not the server's
// own, which gets CORS headers.
func originAllowed(cfg *Config, r *http.Request, origin string) (ok, crossOrigin bool) {
	o := strings.ToLower(origin)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if o == scheme+"://"+strings.ToLower(r.Host) {
		return true, false
	}
	if slices.Contains(cfg.AllowedOrigins, o) {
		return true, true
	}
	return false, false
}

// stateChanging reports whether a method changes state.
func stateChanging(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// guardBrowser applies rules 1 to 3 before next (the mux and its JSON
// fallbacks), and adds the CORS headers of an allowed cross origin.
func (a *API) guardBrowser(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(&a.cfg, r.Host) {
			writeError(w, http.StatusForbidden, CodePermissionDenied,
				fmt.Sprintf("Host %s is not a name this server answers to; add it to PYSTREAM_ALLOWED_HOSTS", quoted(r.Host)))
			return
		}
		cross := false
		if origins := r.Header.Values("Origin"); len(origins) > 0 {
			ok := false
			if len(origins) == 1 {
				ok, cross = originAllowed(&a.cfg, r, origins[0])
			}
			if !ok {
				writeError(w, http.StatusForbidden, CodePermissionDenied,
					fmt.Sprintf("Origin %s may not send requests here; add it to PYSTREAM_ALLOWED_ORIGINS", quoted(strings.Join(origins, ", "))))
				return
			}
		}
		if cross {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", RequestIDHeader+", WWW-Authenticate")
		}
		if r.Method == http.MethodOptions && r.URL.Path != "*" {
			allow := allowedMethods(mux, r)
			if allow == nil {
				next.ServeHTTP(w, r) // an unknown path: the JSON 404
				return
			}
			h := w.Header()
			h.Set("Allow", strings.Join(allow, ", "))
			if cross {
				h.Set("Access-Control-Allow-Methods", strings.Join(allow, ", "))
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, "+IntentHeader+", "+RequestIDHeader)
				h.Set("Access-Control-Max-Age", "600")
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allowedMethods lists the methods the mux has a route for at r's path,
// with OPTIONS; nil when it has none.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" {
			allow = append(allow, m)
		}
	}
	if allow == nil {
		return nil
	}
	return append(allow, http.MethodOptions)
}

// requireIntent applies rules 4 and 5 to a body-less state-changing route.
func requireIntent(rt route, next http.Handler) http.Handler {
	if !stateChanging(rt.Method) || (rt.Operation != nil && rt.Operation.RequestBody != nil) {
		// A route that takes a body refuses every type but its own
		// (mediaType), with 415.
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := intentDenial(r.Header, r.ContentLength); d != nil {
			writeError(w, d.status, d.code, d.message)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// intentDenial decides rules 4 and 5 from a request's headers and its
// Content-Length (-1 when unknown): nil means allowed.
func intentDenial(h http.Header, contentLength int64) *denial {
	if ct := h.Values("Content-Type"); len(ct) > 1 || len(ct) == 1 && ct[0] != "" {
		mt, _, err := mime.ParseMediaType(ct[0])
		if len(ct) == 1 && err == nil && (mt == mediaJSON || mt == "application/octet-stream") {
			return nil
		}
		return &denial{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedMediaType,
			message: fmt.Sprintf("Content-Type %s is refused on a request that changes state: send application/json "+
				"(or application/octet-stream where a route takes it); with no body, send no Content-Type and %s: 1",
				quoted(strings.Join(ct, ", ")), IntentHeader)}
	}
	if contentLength != 0 {
		return &denial{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedMediaType,
			message: "a request body needs a Content-Type: send application/json"}
	}
	if h.Get(IntentHeader) != "" {
		return nil
	}
	if len(h.Values("Origin")) == 0 && len(h.Values("Sec-Fetch-Site")) == 0 {
		return nil // not a browser: curl, a script, a program
	}
	return &denial{status: http.StatusForbidden, code: CodePermissionDenied,
		message: fmt.Sprintf("a browser's body-less request that changes state must carry %s: 1", IntentHeader)}
}
