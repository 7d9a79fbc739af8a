// Package segment: TEMPORARY shim with the agreed API, replaced by the real
// package on merge.
package segment

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pystream/pystream/log"
)

const (
	DefaultSegmentBytes  = 128 << 20
	MinSegmentBytes      = 1 << 10
	MaxSegmentBytes      = 1 << 30
	DefaultSegmentAge    = 7 * 24 * time.Hour
	DefaultIndexInterval = 4 << 10
)

type Options struct {
	Log           log.Options
	SegmentBytes  int64
	SegmentAge    time.Duration
	IndexInterval int
	MustExist     bool
}

var ErrBeforeLogStart = errors.New("segment: offset before the log start")

type Log struct {
	dir string
	*log.Log
}

// LegacyFileName is phase 1's single log file, renamed to the first segment
// by Open.
const LegacyFileName = "log.bin"

func SegmentFileName(base uint64) string { return fmt.Sprintf("%020d.log", base) }

// ParseSegmentFileName is the inverse of SegmentFileName; ok is false for
// any other name.
func ParseSegmentFileName(name string) (base uint64, ok bool) {
	digits, ok := strings.CutSuffix(name, ".log")
	if !ok || len(digits) != 20 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	base, err := strconv.ParseUint(digits, 10, 64)
	return base, err == nil
}

func Open(dir string, opts Options) (*Log, error) {
	l, err := log.OpenWithOptions(filepath.Join(dir, SegmentFileName(0)), opts.Log)
	if err != nil {
		return nil, err
	}
	return &Log{dir: dir, Log: l}, nil
}

func (l *Log) Dir() string                                  { return l.dir }
func (l *Log) LogStart() uint64                             { return 0 }
func (l *Log) SetSegmentOptions(int64, time.Duration) error { return nil }

type SegmentInfo struct {
	Base, Next   uint64
	Size         int64
	MaxTimestamp int64
	Sealed       bool
	Path         string
}

func (l *Log) Segments() []SegmentInfo {
	return []SegmentInfo{{Base: 0, Next: l.NextOffset(), Size: l.Size(), Path: l.Path()}}
}
func (l *Log) AdvanceStart(start uint64) ([]SegmentInfo, error) { return nil, nil }
func (l *Log) ResetTo(start uint64) error                       { return errors.New("shim") }
func (l *Log) OffsetForTime(ts int64) (uint64, bool, error)     { return 0, false, nil }

type RetentionPolicy struct {
	Age   time.Duration
	Bytes int64
}

func PlanRetention(segs []SegmentInfo, p RetentionPolicy, now time.Time, highWatermark uint64) (uint64, int) {
	return segs[0].Base, 0
}

// ScanDir calls fn for every record of every segment in dir, oldest first
// (a directory with only a legacy log.bin is one segment at base 0). Damage
// is a *log.CorruptionError naming the file; a torn tail is possible only in
// the last segment; segments that do not follow on from each other are
// corruption too. seg's Next, Size and MaxTimestamp count the records up to
// and including rec.
func ScanDir(dir string, opts log.Options, fn func(seg SegmentInfo, pos int64, rec log.Record) error) error {
	opts = opts.WithDefaults()
	entries, err := opts.FS.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", dir, err)
	}
	var bases []uint64
	legacy := false
	for _, e := range entries {
		if base, ok := ParseSegmentFileName(e.Name()); ok {
			bases = append(bases, base)
		} else if e.Name() == LegacyFileName {
			legacy = true
		}
	}
	slices.Sort(bases)
	legacyOnly := legacy && len(bases) == 0
	if legacyOnly {
		bases = []uint64{0}
	}
	for i, base := range bases {
		path := filepath.Join(dir, SegmentFileName(base))
		if legacyOnly {
			path = filepath.Join(dir, LegacyFileName)
		}
		last := i == len(bases)-1
		seg := SegmentInfo{Base: base, Next: base, Sealed: !last, Path: path}
		o := opts
		o.BaseOffset = base
		err := log.ScanFileFrom(path, base, o, func(pos int64, rec log.Record) error {
			seg.Next = rec.Offset + 1
			seg.Size = pos + int64(log.FrameSize(len(rec.Payload)))
			seg.MaxTimestamp = max(seg.MaxTimestamp, rec.Timestamp)
			if seg.Next == base+1 {
				seg.MaxTimestamp = rec.Timestamp
			}
			return fn(seg, pos, rec)
		})
		var cerr *log.CorruptionError
		if errors.As(err, &cerr) && cerr.TornTail && !last {
			c := *cerr
			c.TornTail = false
			c.Reason += " (in a sealed segment: not a torn tail)"
			return &c
		}
		if err != nil {
			return err
		}
		if !last && seg.Next != bases[i+1] {
			return &log.CorruptionError{Path: path, Pos: seg.Size, Offset: seg.Next, OffsetKnown: true,
				Reason: fmt.Sprintf("sealed segment ends before offset %d but the next segment starts at %d", seg.Next, bases[i+1])}
		}
	}
	return nil
}
