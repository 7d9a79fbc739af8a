package log

import (
	"fmt"
	"time"

	"github.com/pystream/pystream/log/durable"
)

// FileName is the name phase 1 gives a log's one file in the directory
// that holds it: a partition's before segments (package segment renames it
// to the first segment) and a cluster's journal.
const FileName = "log.bin"

// DefaultMaxPayloadSize is the largest payload a log accepts unless
// Options.MaxPayloadSize says otherwise: 1 MiB.
const DefaultMaxPayloadSize = 1 << 20

// Options tune a log. The zero value is ready to use: every zero field
// means its default, named on the field.
type Options struct {
	// MaxPayloadSize is the largest payload, in bytes, that appends accept.
	// Zero means DefaultMaxPayloadSize; it may not exceed MaxFramePayload.
	MaxPayloadSize int
	// FS is the file system the log uses. Nil means durable.OS.
	FS durable.FS
	// Now supplies append timestamps. Nil means time.Now.
	Now func() time.Time
	// Sync, if set, makes an append's write durable in place of the
	// file's own fsync. It must return only once what was written to the
	// file before the call is durable. Nil means the file's Sync. A
	// broker passes a durable.SyncGroup's Sync, so that the appends of
	// its many partitions share one sync of the file system
	// (docs/design.md § One sync for many partitions); a log of its own
	// needs nothing but its file's fsync.
	Sync func(durable.File) error
	// BaseOffset is the offset of the file's first frame: 0 for a log of
	// its own, the segment's base for a segment of a segmented log
	// (package log/segment). The file's frames are numbered from it.
	BaseOffset uint64
}

// WithDefaults returns o with every zero field set to its default. Each
// entry point that takes Options calls it once, then validate; the layers
// above call it too, so that a default is decided in this one place.
func (o Options) WithDefaults() Options {
	if o.MaxPayloadSize == 0 {
		o.MaxPayloadSize = DefaultMaxPayloadSize
	}
	if o.FS == nil {
		o.FS = durable.OS
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sync == nil {
		o.Sync = durable.File.Sync
	}
	return o
}

// validate refuses options no log can honour.
func (o Options) validate() error {
	if o.MaxPayloadSize < 1 || int64(o.MaxPayloadSize) > MaxFramePayload {
		return fmt.Errorf("log: MaxPayloadSize %d out of range 1..%d: %w", o.MaxPayloadSize, int64(MaxFramePayload), ErrInvalidArgument)
	}
	return nil
}
