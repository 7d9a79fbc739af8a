package explorer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/pystream/pystream/server/apiclient"
)

// MaxTail is the most recent journal entries a stream's tail parameter
// may ask for.
const MaxTail = 1000

// Stream is one client's events stream, between Open and the end of
// Serve. One goroutine (the request's) uses it.
type Stream struct {
	e *Explorer
	c *client
	// next is the journal offset of the next entry to send.
	next uint64
	// sent is the version of the state last sent (0: none yet).
	sent uint64
}

// Open checks an events request and registers its stream: next is where
// its journal starts — after the Last-Event-ID header's offset when the
// client resumes, else the since query parameter, else the tail most
// recent entries, else the journal's end (only new entries). A malformed
// request wraps ErrBadRequest; beyond Config.MaxClients it is
// ErrTooManyClients, beyond Config.MaxPerPrincipal of its principal
// ErrTooManyForPrincipal; while the explorer closes, or once the request's
// server has ended its streams (EndStreamsOf), ErrShuttingDown. The
// caller answers the error; on success it must call Serve.
func (e *Explorer) Open(r *http.Request) (*Stream, error) {
	next, err := e.start(r)
	if err != nil {
		return nil, err
	}
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	c := &client{changed: make(chan struct{}, 1), srv: srv, principal: e.principal(r), done: make(chan struct{})}
	if err := e.register(c); err != nil {
		return nil, err
	}
	return &Stream{e: e, c: c, next: next}, nil
}

// principal names who holds r's stream, for Config.MaxPerPrincipal: its
// token (Config.Principal), else its client's IP address. The two never
// collide: each is prefixed with what it is.
func (e *Explorer) principal(r *http.Request) string {
	if e.cfg.Principal != nil {
		if name := e.cfg.Principal(r); name != "" {
			return "token " + strconv.Quote(name)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "address " + host
}

// start reads where a request's journal starts.
func (e *Explorer) start(r *http.Request) (uint64, error) {
	q := r.URL.Query()
	for k := range q {
		if k != "since" && k != "tail" {
			return 0, fmt.Errorf("%w: unknown query parameter %q; since and tail are known", ErrBadRequest, k)
		}
	}
	if v := r.Header.Values("Last-Event-ID"); len(v) > 0 {
		n, err := strconv.ParseUint(v[0], 10, 64)
		if len(v) > 1 || err != nil || n == ^uint64(0) {
			return 0, fmt.Errorf("%w: Last-Event-ID must be one journal offset, a decimal integer", ErrBadRequest)
		}
		return n + 1, nil
	}
	if q.Has("since") && q.Has("tail") {
		return 0, fmt.Errorf("%w: since and tail exclude each other", ErrBadRequest)
	}
	if q.Has("since") {
		n, err := strconv.ParseUint(q.Get("since"), 10, 64)
		if len(q["since"]) > 1 || err != nil {
			return 0, fmt.Errorf("%w: since must be a journal offset, a decimal integer from 0", ErrBadRequest)
		}
		return n, nil
	}
	end, err := e.src.JournalEnd()
	if err != nil {
		return 0, fmt.Errorf("explorer: the journal's end: %w", err)
	}
	if q.Has("tail") {
		n, err := strconv.ParseUint(q.Get("tail"), 10, 64)
		if len(q["tail"]) > 1 || err != nil || n > MaxTail {
			return 0, fmt.Errorf("%w: tail must be a decimal integer from 0 to %d", ErrBadRequest, MaxTail)
		}
		return end - min(n, end), nil
	}
	return end, nil
}

// ServeEvents answers GET /api/events on its own: Open, then Serve, with
// a plain JSON error ({"error": {"code", "message"}}) when Open refuses.
// The server mounts Open and Serve itself, to answer errors its own way.
func (e *Explorer) ServeEvents(w http.ResponseWriter, r *http.Request) {
	s, err := e.Open(r)
	if err != nil {
		status, code := StatusOf(err)
		if ra := RetryAfterOf(err); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(apiclient.ErrorResponse{Error: apiclient.ErrorBody{Code: code, Message: err.Error()}})
		return
	}
	s.Serve(w, r)
}

// StatusOf is the HTTP status and error code that answer an error of
// Open.
func StatusOf(err error) (status int, code string) {
	switch {
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest, apiclient.CodeInvalidArgument
	case errors.Is(err, ErrTooManyClients), errors.Is(err, ErrTooManyForPrincipal), errors.Is(err, ErrShuttingDown):
		return http.StatusServiceUnavailable, apiclient.CodeUnavailable
	}
	return http.StatusInternalServerError, apiclient.CodeInternal
}

// RetryAfterOf is the Retry-After header (in seconds) that answers an
// error of Open: RetryAfter for a refusal that a stream ending lifts —
// no slot left, in all or for the principal — "" for any other.
func RetryAfterOf(err error) string {
	if errors.Is(err, ErrTooManyClients) || errors.Is(err, ErrTooManyForPrincipal) {
		return strconv.Itoa(int(RetryAfter / time.Second))
	}
	return ""
}

// Serve writes the stream until the client goes away, the explorer ends
// its streams, or a write makes no progress for Config.WriteStall (the
// client is then dropped, and logged). A HEAD request gets the headers
// alone. The server's read and write timeouts do not cut the stream:
// each write gets its own deadline.
func (s *Stream) Serve(w http.ResponseWriter, r *http.Request) {
	defer s.e.unregister(s.c)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no") // a proxy in front must not hold messages back
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	rc := http.NewResponseController(w)
	// The request has been read: no read deadline. A vanished client is
	// found by the keep-alive comments' writes.
	_ = rc.SetReadDeadline(time.Time{})
	bw := bufio.NewWriterSize(w, 32<<10)
	cfg := s.e.cfg
	write := func(f func() error) error {
		if err := rc.SetWriteDeadline(time.Now().Add(cfg.WriteStall)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if err := f(); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	}
	w.WriteHeader(http.StatusOK)
	if err := write(func() error { _, err := fmt.Fprintf(bw, "retry: 1000\n\n"); return err }); err != nil {
		s.dropped(r, err)
		return
	}

	keepAlive := time.NewTicker(cfg.KeepAlive)
	defer keepAlive.Stop()
	gap := time.NewTimer(0)
	defer gap.Stop()
	var last time.Time
	pending := true // the first message: the whole state
	for {
		if pending {
			if wait := cfg.MinGap - time.Since(last); !last.IsZero() && wait > 0 {
				gap.Reset(wait)
				select {
				case <-gap.C:
				case <-r.Context().Done():
					return
				case <-s.c.done:
					return
				}
			}
			more, err := s.send(bw, write)
			if err != nil {
				s.dropped(r, err)
				return
			}
			last, pending = time.Now(), more
			keepAlive.Reset(cfg.KeepAlive)
			if pending {
				continue
			}
		}
		select {
		case <-s.c.changed:
			pending = true
		case <-keepAlive.C:
			if err := write(func() error { _, err := bw.WriteString(": keep-alive\n\n"); return err }); err != nil {
				s.dropped(r, err)
				return
			}
		case <-r.Context().Done():
			return
		case <-s.c.done:
			return
		}
	}
}

// send writes one message with what changed since the last one: the
// state if its version moved, the journal entries from s.next (at most
// Config.MaxEntries). Nothing changed: nothing is written. more reports
// entries left for the next message.
func (s *Stream) send(bw *bufio.Writer, write func(func() error) error) (more bool, err error) {
	state, version, end := s.e.snapshot()
	if version == s.sent {
		state = nil
	}
	var entries []apiclient.JournalEntry
	if s.next < end {
		entries, err = s.e.src.Journal(s.next, s.e.cfg.MaxEntries)
		if err != nil {
			return false, fmt.Errorf("explorer: read the journal from %d: %w", s.next, err)
		}
		more = len(entries) == s.e.cfg.MaxEntries
	}
	if state == nil && len(entries) == 0 {
		return false, nil
	}
	err = write(func() error {
		if n := len(entries); n > 0 {
			if _, err := fmt.Fprintf(bw, "id: %d\n", entries[n-1].Offset); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(bw, "event: %s\ndata: ", apiclient.EventUpdate); err != nil {
			return err
		}
		if err := writeUpdate(bw, time.Now().UTC().Format(time.RFC3339Nano), state, entries); err != nil {
			return err
		}
		_, err := bw.WriteString("\n\n")
		return err
	})
	if err != nil {
		return false, err
	}
	s.sent = version
	if n := len(entries); n > 0 {
		s.next = entries[n-1].Offset + 1
	}
	return more, nil
}

// writeUpdate writes the data of one message: an apiclient.Update, byte
// for byte as json.Marshal encodes one (TestEventsMessageShape), whose
// cluster is state as the poller encoded it — once per version, the same
// bytes for every stream — and omitted when nil; journal is omitted when
// empty. Neither holds a newline (JSON escapes them in strings), so the
// data is one line.
func writeUpdate(w *bufio.Writer, at string, state []byte, journal []apiclient.JournalEntry) error {
	t, err := json.Marshal(at)
	if err != nil {
		return fmt.Errorf("explorer: encode a message: %w", err)
	}
	_, _ = w.WriteString(`{"time":`)
	_, _ = w.Write(t)
	if state != nil {
		_, _ = w.WriteString(`,"cluster":`)
		_, _ = w.Write(state)
	}
	if len(journal) > 0 {
		j, err := json.Marshal(journal)
		if err != nil {
			return fmt.Errorf("explorer: encode a message: %w", err)
		}
		_, _ = w.WriteString(`,"journal":`)
		_, _ = w.Write(j)
	}
	return w.WriteByte('}') // a bufio.Writer keeps its first error: this returns it
}

// dropped logs a stream that ended on a failed write: a client that did
// not keep up, or one that went away mid-write.
func (s *Stream) dropped(r *http.Request, err error) {
	if !errors.Is(err, os.ErrDeadlineExceeded) && r.Context().Err() != nil {
		return // the client went away: not worth a line
	}
	s.e.log.Warn("explorer: events client dropped: a write made no progress", "remote", r.RemoteAddr,
		"write_stall", s.e.cfg.WriteStall, "err", err)
}
