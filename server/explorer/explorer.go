package explorer

import (
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/pystream/pystream/server/apiclient"
)

// Defaults of Config.
const (
	// DefaultInterval is how often the shared poller looks for changes.
	DefaultInterval = 100 * time.Millisecond
	// DefaultMinGap is the least time between two messages to one client:
	// ten messages a second at most.
	DefaultMinGap = 100 * time.Millisecond
	// DefaultWriteStall is how long one write to a client may make no
	// progress before the client is dropped.
	DefaultWriteStall = 10 * time.Second
	// DefaultKeepAlive is the time between two comment lines on a quiet
	// stream, which find a vanished client and keep proxies from closing
	// the connection.
	DefaultKeepAlive = 15 * time.Second
	// DefaultMaxClients is the most streams served at once.
	DefaultMaxClients = 256
	// DefaultMaxPerPrincipal is the most streams one principal (a token,
	// or without one a client address: Config.Principal) holds at once:
	// a quarter of DefaultMaxClients, so that one token cannot hold every
	// slot — at least four principals are served whatever the others do
	// — while a read token shared by a team's browsers still has room.
	DefaultMaxPerPrincipal = DefaultMaxClients / 4
	// RetryAfter is the wait a refused stream is told to take
	// (Retry-After): a slot comes free when a stream ends, not within a
	// second.
	RetryAfter = 5 * time.Second
	// DefaultMaxEntries is the most journal entries in one message.
	DefaultMaxEntries = 500
)

// Errors of the explorer. Each is also answered to the client, as the
// JSON error body the server's other routes use.
var (
	// ErrTooManyClients refuses a stream beyond Config.MaxClients.
	ErrTooManyClients = errors.New("explorer: too many events streams open")
	// ErrTooManyForPrincipal refuses a stream beyond
	// Config.MaxPerPrincipal of one principal.
	ErrTooManyForPrincipal = errors.New("explorer: too many events streams open for one principal")
	// ErrShuttingDown refuses a stream while the explorer closes.
	ErrShuttingDown = errors.New("explorer: the server is shutting down")
	// ErrBadRequest is wrapped by a malformed since or Last-Event-ID.
	ErrBadRequest = errors.New("explorer: bad events request")
	// ErrNoSource is returned by New without a Source.
	ErrNoSource = errors.New("explorer: no source")
)

// Source is what the explorer reads, in the HTTP API's wire shapes. Its
// methods are called from the poller and from the streams' goroutines
// concurrently; it must be safe for that.
type Source interface {
	// State is the cluster as it is now.
	State() (apiclient.ClusterState, error)
	// Journal returns up to max entries from offset since on, oldest
	// first (none past the end).
	Journal(since uint64, max int) ([]apiclient.JournalEntry, error)
	// JournalEnd is the offset the next entry will get.
	JournalEnd() (uint64, error)
}

// Config is an Explorer's settings; zero fields take the defaults.
type Config struct {
	// Source is required.
	Source Source
	// Logger receives dropped clients and failed polls; nil discards.
	Logger *slog.Logger
	// Interval is the poller's period (DefaultInterval).
	Interval time.Duration
	// Advanced, when set, wakes the poller as soon as a partition's high
	// watermark rose (the server's "partition advanced" event): new
	// records to draw are read at once rather than at the next Interval,
	// though never twice within MinGap. It needs room for one wake-up; nil
	// leaves Interval alone.
	Advanced <-chan struct{}
	// MinGap is the least time between two messages to one client
	// (DefaultMinGap).
	MinGap time.Duration
	// WriteStall drops a client whose write makes no progress this long
	// (DefaultWriteStall).
	WriteStall time.Duration
	// KeepAlive is the time between comment lines on a quiet stream
	// (DefaultKeepAlive).
	KeepAlive time.Duration
	// MaxClients bounds the streams served at once (DefaultMaxClients).
	MaxClients int
	// MaxPerPrincipal bounds the streams one principal holds at once;
	// zero is a quarter of MaxClients, at least one
	// (DefaultMaxPerPrincipal with the default MaxClients).
	MaxPerPrincipal int
	// Principal names the token a request was authorized with, "" for
	// none; nil names none. A request without a token is counted by its
	// client's IP address (the host of its RemoteAddr) instead.
	Principal func(r *http.Request) string
	// MaxEntries bounds the journal entries of one message
	// (DefaultMaxEntries).
	MaxEntries int
}

// Explorer serves the page and the events stream. It is safe for
// concurrent use: every stream runs in its request's goroutine, and one
// poller goroutine runs while any stream is open.
type Explorer struct {
	src Source
	cfg Config
	log *slog.Logger

	// mu guards the fields below.
	mu sync.Mutex
	// clients are the open streams; held counts them by principal
	// (client.principal), a principal without one absent.
	clients map[*client]struct{}
	held    map[string]int
	// state is the last state the poller read, encoded; version counts
	// its changes (0: none read yet).
	state   []byte
	version uint64
	// journalEnd is the journal's end as last polled.
	journalEnd uint64
	// polling is true while the poller runs; pollDone is closed when it
	// has stopped.
	polling  bool
	pollDone chan struct{}
	// ended are the HTTP servers whose streams EndStreamsOf ended: a
	// stream they open afterwards is refused.
	ended map[*http.Server]bool
	// closed refuses new streams once Close has run; quit is closed then,
	// which stops the poller at once.
	closed bool
	quit   chan struct{}
	// stateErr and journalErr are the last failures of the poller's
	// reads, as logged ("" after a success): a failure is logged when it
	// starts or changes, not on every poll.
	stateErr, journalErr string
}

// client is one open stream, as the poller sees it.
type client struct {
	// changed has room for one wake-up: more changes before the stream
	// takes it coalesce into it.
	changed chan struct{}
	// srv is the HTTP server that serves the stream (nil when unknown).
	srv *http.Server
	// principal is who holds the stream (Explorer.principal).
	principal string
	// done is closed to end the stream (endLocked).
	done  chan struct{}
	ended bool
}

// New returns an explorer that reads cfg.Source.
func New(cfg Config) (*Explorer, error) {
	if cfg.Source == nil {
		return nil, ErrNoSource
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Interval, DefaultInterval)
	def(&cfg.MinGap, DefaultMinGap)
	def(&cfg.WriteStall, DefaultWriteStall)
	def(&cfg.KeepAlive, DefaultKeepAlive)
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.MaxPerPrincipal <= 0 {
		cfg.MaxPerPrincipal = max(cfg.MaxClients/4, 1)
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Explorer{src: cfg.Source, cfg: cfg, log: logger, clients: map[*client]struct{}{}, held: map[string]int{}, ended: map[*http.Server]bool{},
		quit: make(chan struct{})}, nil
}

// Clients is the number of open streams.
func (e *Explorer) Clients() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.clients)
}

// EndStreams ends every open stream. Streams opened afterwards are served
// as usual.
func (e *Explorer) EndStreams() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for c := range e.clients {
		c.endLocked()
	}
}

// EndStreamsOf ends every stream srv serves, and refuses (ErrShuttingDown)
// every stream srv opens afterwards: a server shutting down calls it (its
// RegisterOnShutdown), so that its graceful shutdown waits for no stream —
// not even one whose request was already under way and opens the stream
// just after. Streams of other servers go on.
func (e *Explorer) EndStreamsOf(srv *http.Server) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended[srv] = true
	for c := range e.clients {
		if c.srv == srv {
			c.endLocked()
		}
	}
}

// endLocked ends the stream. e.mu must be held.
func (c *client) endLocked() {
	if !c.ended {
		c.ended = true
		close(c.done)
	}
}

// Close ends every stream, refuses new ones and waits for the poller to
// stop. Closing twice is harmless.
func (e *Explorer) Close() {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.quit)
	}
	for c := range e.clients {
		c.endLocked()
	}
	done := e.pollDone
	e.mu.Unlock()
	if done != nil {
		<-done
	}
}
