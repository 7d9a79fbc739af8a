package log

import (
	"fmt"
	"time"

	"github.com/pystream/pystream/log/durable"
)

// DefaultMaxPayloadSize is the largest payload a log accepts unless
// Options.MaxPayloadSize says otherwise: 1 MiB.
const DefaultMaxPayloadSize = 1 << 20

// Options tune a log. The zero value is ready to use.
type Options struct {
	// MaxPayloadSize is the largest payload, in bytes, that appends accept.
	// Zero means DefaultMaxPayloadSize; it may not exceed MaxFramePayload.
	MaxPayloadSize int
	// FS is the file system the log uses. Nil means durable.OS.
	FS durable.FS
	// Now supplies append timestamps. Nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	switch {
	case o.MaxPayloadSize == 0:
		o.MaxPayloadSize = DefaultMaxPayloadSize
	case o.MaxPayloadSize < 0 || int64(o.MaxPayloadSize) > MaxFramePayload:
		return o, fmt.Errorf("log: MaxPayloadSize %d out of range 1..%d: %w", o.MaxPayloadSize, int64(MaxFramePayload), ErrInvalidArgument)
	}
	if o.FS == nil {
		o.FS = durable.OS
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}
