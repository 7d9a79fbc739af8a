package netmux

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultFirstByteTimeout is how long a connection may stay silent before
// its first byte when Config.FirstByteTimeout is zero.
const DefaultFirstByteTimeout = 10 * time.Second

// Config tunes a Mux. The zero value is usable.
type Config struct {
	// FirstByteTimeout is how long an accepted connection may take to send
	// its first byte before it is closed. Zero means
	// DefaultFirstByteTimeout.
	FirstByteTimeout time.Duration
	// Logger receives the lines of an episode of failed accepts (no file
	// descriptor left: server/bounds.Listener); nil discards them.
	Logger *slog.Logger
	// AcceptErrors counts the accepts that failed and were retried
	// (bounds.AcceptErrors); nil counts nothing.
	AcceptErrors prometheus.Counter
}

func (c Config) firstByteTimeout() time.Duration {
	if c.FirstByteTimeout <= 0 {
		return DefaultFirstByteTimeout
	}
	return c.FirstByteTimeout
}
