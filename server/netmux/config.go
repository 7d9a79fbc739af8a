package netmux

import "time"

// DefaultFirstByteTimeout is how long a connection may stay silent before
// its first byte when Config.FirstByteTimeout is zero.
const DefaultFirstByteTimeout = 10 * time.Second

// Config tunes a Mux. The zero value is usable.
type Config struct {
	// FirstByteTimeout is how long an accepted connection may take to send
	// its first byte before it is closed. Zero means
	// DefaultFirstByteTimeout.
	FirstByteTimeout time.Duration
}

func (c Config) firstByteTimeout() time.Duration {
	if c.FirstByteTimeout <= 0 {
		return DefaultFirstByteTimeout
	}
	return c.FirstByteTimeout
}
