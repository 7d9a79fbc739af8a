package segment

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pystream/pystream/log"
)

// ScanDir reads the segmented log in dir without changing anything, for
// tools such as a verifier or a dumper: it calls fn for every record of
// every segment, oldest first, with the segment's description and the
// record's byte position in its file. Records below the log start that are
// still on disk (part of the first segment, or whole segments an
// interrupted deletion left) are included: seg.Base and the log start file
// tell them apart. A directory with only a legacy log.bin is scanned as one
// segment at base 0. Damage returns a *log.CorruptionError naming the
// file; a torn tail (TornTail true) is possible only in the last segment,
// and anywhere else it is plain corruption (TornTail false). Segments that
// do not follow on from each other are corruption too. Sidecars are not
// read. fn may keep the records it is given; its error stops the scan and
// is returned. seg describes the segment as far as the scan has come: Next,
// Size and MaxTimestamp count the records up to and including rec.
func ScanDir(dir string, opts log.Options, fn func(seg SegmentInfo, pos int64, rec log.Record) error) error {
	opts = opts.WithDefaults()
	l := &Log{dir: dir, fs: opts.FS}
	d, err := l.list()
	if err != nil {
		return err
	}
	legacyOnly := d.legacy && len(d.segments) == 0
	if legacyOnly {
		d.segments = []uint64{0}
	}
	for i, base := range d.segments {
		path := l.segmentPath(base)
		if legacyOnly {
			path = filepath.Join(dir, LegacyFileName)
		}
		last := i == len(d.segments)-1
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
		if !last && seg.Next != d.segments[i+1] {
			return &log.CorruptionError{Path: path, Pos: seg.Size, Offset: seg.Next, OffsetKnown: true,
				Reason: fmt.Sprintf("sealed segment ends before offset %d but the next segment starts at %d", seg.Next, d.segments[i+1])}
		}
	}
	return nil
}
