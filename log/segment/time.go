package segment

import (
	"fmt"
	"sort"

	"github.com/pystream/pystream/log"
)

// OffsetForTime returns the first offset at or above LogStart whose record
// has a timestamp >= ts, as Kafka's ListOffsets does. Timestamps may step
// back (a clock that moved, a leader's records), so the search goes by the
// largest timestamp so far: a segment, or a stretch of one between two
// sidecar entries, is skipped only when every timestamp in it is below ts;
// within the rest, records are read in order. found is false when no
// record qualifies. A sealed segment's sidecar is read from disk (and a
// segment whose sidecar has become unreadable is walked from its start).
func (l *Log) OffsetForTime(ts int64) (off uint64, found bool, err error) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	if l.closed {
		return 0, false, fmt.Errorf("segment: offset for time in %s: %w", l.dir, log.ErrClosed)
	}
	ls := l.logStartLocked()
	for _, s := range l.sealed {
		if s.next <= ls || s.maxTS < ts {
			continue
		}
		if off, found, err := s.offsetForTime(l, ts, ls); err != nil || found {
			return off, found, err
		}
	}
	a := l.active
	if m, err := a.maxTimestamp(); err != nil || m < ts {
		return 0, false, err
	}
	for from := max(ls, a.base); ; {
		recs, err := a.log.Read(from, 1024)
		if err != nil || len(recs) == 0 {
			return 0, false, err
		}
		for _, r := range recs {
			if r.Timestamp >= ts {
				return r.Offset, true, nil
			}
		}
		from = recs[len(recs)-1].Offset + 1
	}
}

// offsetForTime searches one sealed segment from the last sidecar entry
// whose largest-so-far timestamp is below ts.
func (s *sealedSegment) offsetForTime(l *Log, ts int64, logStart uint64) (uint64, bool, error) {
	pos, off := int64(0), s.base
	if sc, err := readSidecar(l.fs, l.sidecarPath(s.base), s.size); err == nil && sc.base == s.base && sc.size == s.size {
		// entries[k].maxTS < ts: every record up to entry k is older.
		k := sort.Search(len(sc.entries), func(i int) bool { return sc.entries[i].maxTS >= ts }) - 1
		if k >= 0 {
			pos, off = int64(sc.entries[k].pos), s.base+uint64(sc.entries[k].rel)
		}
	}
	var (
		res   uint64
		found bool
	)
	err := walkHeaders(s.path, s.file, s.size, pos, off, func(_ int64, h frameHeader) bool {
		if h.offset >= logStart && h.timestamp >= ts {
			res, found = h.offset, true
			return false
		}
		return true
	})
	return res, found, err
}
