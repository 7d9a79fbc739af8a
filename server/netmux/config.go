package netmux

import (
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultFirstByteTimeout is how long a connection may stay silent before
// its first byte when Config.FirstByteTimeout is zero.
const DefaultFirstByteTimeout = 10 * time.Second

// Config tunes a Mux. The zero value is usable.
type Config struct {
	// FirstByteTimeout is how long an accepted connection may take to send
	// its first byte (with TLS, its handshake and its first byte) before
	// it is closed. Zero means
	// DefaultFirstByteTimeout.
	FirstByteTimeout time.Duration
	// Logger receives the lines of an episode of failed accepts (no file
	// descriptor left: server/bounds.Listener); nil discards them.
	Logger *slog.Logger
	// AcceptErrors counts the accepts that failed and were retried
	// (bounds.AcceptErrors); nil counts nothing.
	AcceptErrors prometheus.Counter
	// TLS, when set, makes every connection a TLS server connection: the
	// handshake runs before the first byte is read, within
	// FirstByteTimeout, and a connection whose handshake fails is closed
	// without reaching any listener. Nil: plain connections.
	TLS *tls.Config
	// Refused, when set, is told once of each connection closed because
	// its TLS handshake failed: the peer's address and why, before the
	// connection is closed. It must not block. A port that logs it
	// rate-limits its lines (server/bounds.Refusals): a stranger may
	// connect in a loop.
	Refused func(remote net.Addr, err error)
}

func (c Config) firstByteTimeout() time.Duration {
	if c.FirstByteTimeout <= 0 {
		return DefaultFirstByteTimeout
	}
	return c.FirstByteTimeout
}
