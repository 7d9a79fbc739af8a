package topic

import (
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
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

// withDefaults returns o with every zero field set to its default: the
// log's, since every field is handed to the partition logs.
// OpenWithOptions and OpenExisting call it once, on entry.
func (o Options) withDefaults() Options {
	l := o.logOptions().WithDefaults()
	o.FS, o.MaxPayloadSize, o.Now = l.FS, l.MaxPayloadSize, l.Now
	return o
}

// segmentOptions are the options of every partition's segmented log.
func (o Options) segmentOptions() segment.Options {
	return segment.Options{Log: o.logOptions()}
}

// logOptions are the phase-1 options of every partition's log.
func (o Options) logOptions() log.Options {
	return log.Options{FS: o.FS, MaxPayloadSize: o.MaxPayloadSize, Now: o.Now}
}
