package httpapi

import (
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/pystream/pystream/server/apiclient"
)

// RequestIDHeader carries a request's id, in both directions: observe
// answers every request with it and puts the same id in every error body
// and in the request's log lines.
const RequestIDHeader = apiclient.RequestIDHeader

// maxRequestIDLength bounds an id a client sends; a longer one is replaced.
const maxRequestIDLength = 64

// requestID returns the id of r: the client's X-Request-Id when it sent
// exactly one that is 1 to maxRequestIDLength characters of A-Z a-z 0-9 and
// - _ . : (a UUID, a ULID, a proxy's id all fit), so that one id follows a
// request through a proxy and PyStream; otherwise a new one, 16 hex digits.
// The charset keeps an id harmless in a header, a JSON body and a log line.
func requestID(r *http.Request) string {
	if v := r.Header[RequestIDHeader]; len(v) == 1 && validRequestID(v[0]) {
		return v[0]
	}
	return newRequestID()
}

func validRequestID(s string) bool {
	if s == "" || len(s) > maxRequestIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// newRequestID is 64 random bits in hex: unique enough to find one
// request in a server's log, and cheap on the busiest path. It is not a
// secret, so math/rand is enough.
func newRequestID() string {
	var b [8]byte
	n := rand.Uint64()
	for i := range b {
		b[i] = byte(n >> (8 * i))
	}
	return hex.EncodeToString(b[:])
}

// statusRecorder is the middleware's view of one exchange: the request's
// id, the status a handler answered with, and the error answer it sent.
// One goroutine (the request's) uses it.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	// id is the request's id (RequestIDHeader).
	id string
	// root is the data directory, which no error answer names.
	root string
	// start is when observe took the request in.
	start time.Time
	// failed is set by finishError when the answer is an error: failure
	// is its body as sent, cause the library error behind it (nil for an
	// answer built from the request alone).
	failed  bool
	failure ErrorBody
	cause   error
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote && code >= 200 {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer (Flush,
// deadlines), which streaming handlers need.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// recorderOf finds the middleware's recorder behind w, through writers
// that wrap it; nil outside the middleware.
func recorderOf(w http.ResponseWriter) *statusRecorder {
	for {
		switch x := w.(type) {
		case *statusRecorder:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// observe gives every request an id (RequestIDHeader), logs one line per
// request (method, path, status, duration, request id), records it in the
// HTTP metrics by route pattern, and turns a panicking handler into a
// logged 500 JSON error instead of a dropped connection.
//
// An error answer's full cause never reaches the client (classify writes
// the message); it is logged here under the request id, on a line of its
// own: ERROR for a 500, WARNING for another 5xx, DEBUG for a 4xx that a
// library error caused. A 5xx without a cause (not ready) needs none: its
// body says it all.
func observe(logger *slog.Logger, m *metrics, root string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, id: requestID(r), root: root, start: start}
		w.Header()[RequestIDHeader] = []string{rec.id}
		defer func() {
			p := recover()
			if p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger.Error("handler panicked", "request_id", rec.id, "method", r.Method, "path", clipMessage(r.URL.Path),
					"panic", p, "stack", string(debug.Stack()))
				if !rec.wrote {
					writeError(rec, http.StatusInternalServerError, CodeInternal, "internal server error; the server log has the cause")
				}
			}
			status := rec.status
			if !rec.wrote {
				status = http.StatusOK // nothing written: net/http sends 200
			}
			elapsed := time.Since(start)
			m.observeHTTP(r.Pattern, r.Method, status, elapsed)
			ctx := r.Context()
			if logger.Enabled(ctx, slog.LevelInfo) {
				logger.LogAttrs(ctx, slog.LevelInfo, "request",
					slog.String("method", r.Method),
					slog.String("path", clipMessage(r.URL.Path)),
					slog.Int("status", status),
					slog.Duration("duration", elapsed),
					slog.String("request_id", rec.id),
				)
			}
			if rec.failed && p == nil { // a panic has its own line
				logFailure(logger, r, rec, status)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// requestStart is when observe took in the request answered through w,
// as near as a handler can know to the moment the server read its
// headers, when the write timeout starts; now for a writer observe did
// not make.
func requestStart(w http.ResponseWriter) time.Time {
	if rec := recorderOf(w); rec != nil {
		return rec.start
	}
	return time.Now()
}

// logFailure logs an error answer's cause: what the client read and the
// whole error, under the request id.
func logFailure(logger *slog.Logger, r *http.Request, rec *statusRecorder, status int) {
	level := slog.LevelDebug
	switch {
	case status == http.StatusInternalServerError:
		level = slog.LevelError
	case status >= 500 && rec.cause != nil:
		level = slog.LevelWarn
	case rec.cause == nil:
		return
	}
	ctx := r.Context()
	if !logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("request_id", rec.id),
		slog.String("method", r.Method),
		slog.String("path", clipMessage(r.URL.Path)),
		slog.Int("status", status),
		slog.String("code", rec.failure.Code),
		slog.String("message", rec.failure.Message),
	}
	if rec.cause != nil {
		attrs = append(attrs, slog.String("error", rec.cause.Error()))
	}
	logger.LogAttrs(ctx, level, "request failed", attrs...)
}
