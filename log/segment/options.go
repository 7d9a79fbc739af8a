package segment

import (
	"fmt"
	"time"

	"github.com/pystream/pystream/log"
)

// Defaults and bounds of Options.
const (
	// DefaultSegmentBytes is the size at which the active segment rolls
	// unless Options.SegmentBytes says otherwise: 128 MiB.
	DefaultSegmentBytes = 128 << 20
	// MinSegmentBytes and MaxSegmentBytes bound Options.SegmentBytes.
	MinSegmentBytes = 1 << 10
	MaxSegmentBytes = 1 << 30
	// DefaultSegmentAge is the age of its first record at which the active
	// segment rolls unless Options.SegmentAge says otherwise (Kafka's
	// segment.ms default).
	DefaultSegmentAge = 7 * 24 * time.Hour
	// DefaultIndexInterval is the number of bytes of frames between two
	// entries of a sidecar's sparse index.
	DefaultIndexInterval = 4 << 10
)

// Options tune a segmented log. The zero value is ready to use: every zero
// field means its default, named on the field.
type Options struct {
	// Log configures every segment: MaxPayloadSize, and the FS and Now
	// that the segmented log uses for everything it does. Its BaseOffset
	// is ignored: each segment's comes from its file name.
	Log log.Options
	// SegmentBytes is the size the active segment may reach before it
	// rolls. Zero means DefaultSegmentBytes; a value outside
	// [MinSegmentBytes, MaxSegmentBytes] is an error wrapping
	// log.ErrInvalidArgument.
	SegmentBytes int64
	// SegmentAge rolls the active segment once its first record is this
	// old (Kafka's segment.ms). Zero means DefaultSegmentAge; negative is
	// invalid.
	SegmentAge time.Duration
	// IndexInterval is the number of bytes of frames between two entries
	// of a sealed segment's sparse index. Zero means DefaultIndexInterval;
	// negative or above MaxSegmentBytes is invalid.
	IndexInterval int
	// MustExist makes Open refuse, with an error wrapping fs.ErrNotExist
	// and nothing created, a directory that holds no log: no segment, no
	// legacy log.bin and no persisted log start. An existing replica whose
	// files are gone is reported rather than recreated empty.
	MustExist bool
	// Logf, if set, is told about every repair Open makes: a sidecar
	// rebuilt, a stale or orphan file removed, a legacy log.bin renamed,
	// segments below the log start deleted. A server passes its logger.
	Logf func(format string, args ...any)
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	o.Log = o.Log.WithDefaults()
	o.Log.BaseOffset = 0
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.SegmentAge == 0 {
		o.SegmentAge = DefaultSegmentAge
	}
	if o.IndexInterval == 0 {
		o.IndexInterval = DefaultIndexInterval
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// validate refuses options no segmented log can honour.
func (o Options) validate() error {
	if err := checkSegmentOptions(o.SegmentBytes, o.SegmentAge); err != nil {
		return err
	}
	if o.IndexInterval < 1 || o.IndexInterval > MaxSegmentBytes {
		return fmt.Errorf("segment: IndexInterval %d out of range 1..%d: %w", o.IndexInterval, MaxSegmentBytes, log.ErrInvalidArgument)
	}
	if o.Log.MaxPayloadSize < 1 || int64(o.Log.MaxPayloadSize) > log.MaxFramePayload {
		return fmt.Errorf("segment: MaxPayloadSize %d out of range 1..%d: %w", o.Log.MaxPayloadSize, int64(log.MaxFramePayload), log.ErrInvalidArgument)
	}
	return nil
}

// checkSegmentOptions checks a segment size and age after defaults.
func checkSegmentOptions(bytes int64, age time.Duration) error {
	if bytes < MinSegmentBytes || bytes > MaxSegmentBytes {
		return fmt.Errorf("segment: SegmentBytes %d out of range %d..%d: %w", bytes, MinSegmentBytes, MaxSegmentBytes, log.ErrInvalidArgument)
	}
	if age < 0 {
		return fmt.Errorf("segment: SegmentAge %v is negative: %w", age, log.ErrInvalidArgument)
	}
	return nil
}
