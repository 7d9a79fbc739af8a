// Package segment: TEMPORARY shim with the agreed API, replaced by the real
// package on merge.
package segment

import (
	"errors"
	"fmt"
	"path/filepath"
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

func SegmentFileName(base uint64) string { return fmt.Sprintf("%020d.log", base) }

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

func ScanDir(dir string, opts log.Options, fn func(seg SegmentInfo, pos int64, rec log.Record) error) error {
	p := filepath.Join(dir, SegmentFileName(0))
	return log.ScanFileWithOptions(p, opts, func(pos int64, r log.Record) error { return fn(SegmentInfo{Path: p}, pos, r) })
}
