package bounds

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The backoff after a temporary accept failure, as net/http's.
const (
	// FirstAcceptBackoff is the wait after the first failure of an episode.
	FirstAcceptBackoff = 5 * time.Millisecond
	// MaxAcceptBackoff caps the wait, which doubles at each failure.
	MaxAcceptBackoff = time.Second
)

// NextBackoff is the wait after a temporary accept failure that followed a
// wait of d (zero for the first): FirstAcceptBackoff, then doubling up to
// MaxAcceptBackoff.
func NextBackoff(d time.Duration) time.Duration {
	if d <= 0 {
		return FirstAcceptBackoff
	}
	return min(2*d, MaxAcceptBackoff)
}

// Temporary reports whether an accept error is worth retrying: no file
// descriptor left in the process (EMFILE) or the system (ENFILE), no
// buffer or memory for the socket (ENOBUFS, ENOMEM), a connection aborted
// before it was accepted, or any error that says it is temporary, as
// net/http's accept loop retries.
func Temporary(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// acceptErrorsName is the metric of accept failures, one series per
// listener.
const acceptErrorsName = "pystream_accept_errors_total"

// AcceptErrors is the counter of temporary accept failures of the listener
// named name ("http", "kafka", "internal"), registered on reg (nil: a
// counter no one scrapes). Every listener of a registry shares the one
// family, so calling it again with the same registry is fine.
func AcceptErrors(reg prometheus.Registerer, name string) (prometheus.Counter, error) {
	vec, err := counterVec(reg, prometheus.CounterOpts{
		Name: acceptErrorsName,
		Help: "Accepts that failed for a temporary reason (no file descriptor left: EMFILE, ENFILE) and were retried after a backoff, by listener.",
	}, "listener")
	if err != nil {
		return nil, err
	}
	return vec.WithLabelValues(name), nil
}

// counterVec registers a counter family on reg (nil: a family no one
// scrapes), or returns the one registered already under the same name:
// every listener of a server's registry shares one family, and tests make
// several registries.
func counterVec(reg prometheus.Registerer, opts prometheus.CounterOpts, labels ...string) (*prometheus.CounterVec, error) {
	vec := prometheus.NewCounterVec(opts, labels)
	if reg == nil {
		return vec, nil
	}
	if err := reg.Register(vec); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
		if !ok {
			return nil, err
		}
		return existing, nil
	}
	return vec, nil
}

// Listener is a net.Listener whose Accept survives temporary failures: it
// waits (NextBackoff) and accepts again, logging an episode of failures
// once when it starts and once when it ends. Close ends a wait at once.
// Safe for concurrent use.
type Listener struct {
	net.Listener
	name     string
	log      *slog.Logger
	failures prometheus.Counter

	done      chan struct{}
	closeOnce sync.Once
}

// Guard wraps ln. name says which listener the log lines and the metric
// name; logger (nil: discard) receives the episode lines; failures (nil:
// none) counts each failed accept, AcceptErrors gives it.
func Guard(ln net.Listener, name string, logger *slog.Logger, failures prometheus.Counter) *Listener {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Listener{Listener: ln, name: name, log: logger, failures: failures, done: make(chan struct{})}
}

// Accept returns the next connection. A temporary failure is retried after
// a backoff; any other error is returned, as is net.ErrClosed once Close
// was called during a wait.
func (l *Listener) Accept() (net.Conn, error) {
	var (
		wait   time.Duration
		failed int
		since  time.Time
	)
	for {
		c, err := l.Listener.Accept()
		if err == nil || !Temporary(err) {
			if failed > 0 {
				l.log.Info("accepting connections again", "listener", l.name, "addr", l.Addr().String(),
					"failed_accepts", failed, "for", time.Since(since).Round(time.Millisecond).String())
			}
			return c, err
		}
		if failed == 0 {
			since = time.Now()
			l.log.Warn("accept failing: backing off until descriptors come free", "listener", l.name,
				"addr", l.Addr().String(), "err", err)
		}
		failed++
		if l.failures != nil {
			l.failures.Inc()
		}
		wait = NextBackoff(wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-l.done:
			t.Stop()
			l.log.Info("accept failures ended: listener closed", "listener", l.name, "addr", l.Addr().String(),
				"failed_accepts", failed, "for", time.Since(since).Round(time.Millisecond).String())
			return nil, &net.OpError{Op: "accept", Net: l.Addr().Network(), Addr: l.Addr(), Err: net.ErrClosed}
		}
	}
}

// Close closes the listener and ends a wait in Accept.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}
