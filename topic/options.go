package topic

import (
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// Options tune OpenWithOptions and OpenExisting. The zero value is ready to
// use: every zero field means its default, named on the field.
type Options struct {
	// FS is the file system for metadata and partition logs. Nil means
	// durable.OS.
	FS durable.FS
	// MaxPayloadSize is the largest payload each partition accepts. Zero
	// means log.DefaultMaxPayloadSize.
	MaxPayloadSize int
	// Now supplies append timestamps. Nil means time.Now.
	Now func() time.Time
}

// withDefaults returns o with every zero field set to its default.
// OpenWithOptions and OpenExisting call it once, on entry.
func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = durable.OS
	}
	if o.MaxPayloadSize == 0 {
		o.MaxPayloadSize = log.DefaultMaxPayloadSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// logOptions are the options of every partition's log.
func (o Options) logOptions() log.Options {
	return log.Options{FS: o.FS, MaxPayloadSize: o.MaxPayloadSize, Now: o.Now}
}
