package segment

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/pystream/pystream/log"
)

// readAhead is the least a read of a sealed segment asks the disk for, so
// that a reader going forward gets a useful batch per call.
const readAhead = 64 << 10

// Read returns up to maxRecords records from offset start, with the
// contract of log.Log.Read: fewer only at the end of the log, crossing
// segment boundaries as needed (each step one positional read of a
// bounded window). A start below LogStart is an error wrapping
// ErrBeforeLogStart. Reads never wait for appends or rolls.
func (l *Log) Read(start uint64, maxRecords int) ([]log.Record, error) {
	if maxRecords < 1 {
		return nil, fmt.Errorf("segment: read %s: maxRecords %d < 1: %w", l.dir, maxRecords, log.ErrInvalidArgument)
	}
	var out []log.Record
	for len(out) < maxRecords {
		recs, err := l.readStep(start, maxRecords-len(out))
		if err != nil {
			if len(out) > 0 && errors.Is(err, ErrBeforeLogStart) {
				break // retention passed us meanwhile: what we have is whole
			}
			return nil, err
		}
		if len(recs) == 0 {
			break
		}
		if out == nil && len(recs) == maxRecords {
			return recs, nil
		}
		out = append(out, recs...)
		start += uint64(len(recs))
	}
	return out, nil
}

// readStep is one step of Read: it may stop at the end of a segment, or
// of the read window within a sealed one, returning fewer records, but
// never none while start < NextOffset.
func (l *Log) readStep(start uint64, maxRecords int) ([]log.Record, error) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	if l.closed {
		return nil, fmt.Errorf("segment: read %s: %w", l.dir, log.ErrClosed)
	}
	if ls := l.logStartLocked(); start < ls {
		return nil, fmt.Errorf("segment: read %s: offset %d, log start %d: %w", l.dir, start, ls, ErrBeforeLogStart)
	}
	if start >= l.active.base {
		return l.active.log.Read(start, maxRecords)
	}
	i := sort.Search(len(l.sealed), func(i int) bool { return l.sealed[i].base > start }) - 1
	return l.sealed[i].read(l, start, maxRecords)
}

// read reads from a sealed segment: a binary search of the thin index, one
// positional read of the window from the entry at or before start to the
// next entry (at least readAhead bytes), and a walk to start.
func (s *sealedSegment) read(l *Log, start uint64, maxRecords int) ([]log.Record, error) {
	thin, err := s.index(l)
	if err != nil {
		return nil, err
	}
	rel := start - s.base
	i := sort.Search(len(thin), func(i int) bool { return uint64(thin[i].rel) > rel }) - 1
	from, off := int64(thin[i].pos), s.base+uint64(thin[i].rel)
	to := s.size
	if i+1 < len(thin) {
		to = max(int64(thin[i+1].pos), min(s.size, from+readAhead))
	}
	buf, err := s.readAt(from, to-from)
	if err != nil {
		return nil, err
	}
	var recs []log.Record
	at := int64(0)
	for off < s.next && len(recs) < maxRecords {
		if int64(len(buf))-at < log.HeaderSize {
			break // only after at least one record: start lies before to
		}
		h, ok := decodeFrameHeader(buf[at:])
		if !ok || h.offset != off || from+at+h.frameSize() > s.size {
			return nil, &log.CorruptionError{Path: s.path, Pos: from + at, Offset: off, OffsetKnown: true, Reason: "frame changed on disk after the segment was sealed"}
		}
		end := at + h.frameSize()
		if end > int64(len(buf)) {
			if len(recs) > 0 || off < start {
				break
			}
			// The wanted record runs past the window: read the rest of it.
			more, err := s.readAt(from+int64(len(buf)), end-int64(len(buf)))
			if err != nil {
				return nil, err
			}
			buf = append(buf, more...)
		}
		if off >= start {
			recs = append(recs, log.Record{Offset: off, Timestamp: h.timestamp, Payload: buf[at+log.HeaderSize : end : end]})
		}
		at = end
		off++
	}
	return recs, nil
}

// readAt reads n bytes at pos of the segment file.
func (s *sealedSegment) readAt(pos, n int64) ([]byte, error) {
	buf := make([]byte, n)
	if got, err := s.file.ReadAt(buf, pos); int64(got) < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("segment: read %s at byte %d: %w", s.path, pos, err)
	}
	return buf, nil
}
