package segment

import (
	"fmt"
	"math"
	"time"

	"github.com/pystream/pystream/log"
)

// Append assigns payload the next offset and the current time, makes it
// durable in the active segment (rolling first when it is full or old) and
// returns the record, as log.Log.Append does.
func (l *Log) Append(payload []byte) (log.Record, error) {
	if err := l.checkPayload(0, payload); err != nil {
		return log.Record{}, err
	}
	var rec log.Record
	err := l.write(int64(log.FrameSize(len(payload))), func(a *activeSegment) error {
		r, err := a.log.Append(payload)
		if err == nil {
			rec = r
			a.appended(r.Offset, r.Timestamp, r.Timestamp)
		}
		return err
	})
	return rec, err
}

// AppendBatch appends payloads as consecutive records with one write and
// one fsync, as log.Log.AppendBatch does. A batch never spans two segments:
// it goes whole into the active segment or, when it would take that past
// SegmentBytes, whole into a new one; a batch larger than SegmentBytes
// goes alone into an empty segment.
func (l *Log) AppendBatch(payloads [][]byte) ([]log.Record, error) {
	size := int64(0)
	for i, p := range payloads {
		if err := l.checkPayload(i, p); err != nil {
			return nil, err
		}
		size += int64(log.FrameSize(len(p)))
	}
	var recs []log.Record
	err := l.write(size, func(a *activeSegment) error {
		r, err := a.log.AppendBatch(payloads)
		if err == nil && len(r) > 0 {
			recs = r
			a.appended(r[0].Offset, r[0].Timestamp, r[0].Timestamp)
		}
		return err
	})
	return recs, err
}

// AppendRecord stores a record whose offset and timestamp another log
// assigned, as log.Log.AppendRecord does: its offset must be NextOffset.
func (l *Log) AppendRecord(rec log.Record) error {
	return l.AppendRecords([]log.Record{rec})
}

// AppendRecords stores consecutive records assigned elsewhere with one
// write and one fsync, as log.Log.AppendRecords does; like AppendBatch, they
// go whole into one segment.
func (l *Log) AppendRecords(recs []log.Record) error {
	size := int64(0)
	maxTS := int64(math.MinInt64)
	for i, r := range recs {
		if err := l.checkPayload(i, r.Payload); err != nil {
			return err
		}
		size += int64(log.FrameSize(len(r.Payload)))
		maxTS = max(maxTS, r.Timestamp)
	}
	return l.write(size, func(a *activeSegment) error {
		err := a.log.AppendRecords(recs)
		if err == nil && len(recs) > 0 {
			a.appended(recs[0].Offset, recs[0].Timestamp, maxTS)
		}
		return err
	})
}

func (l *Log) checkPayload(i int, p []byte) error {
	if len(p) > l.opts.Log.MaxPayloadSize {
		return fmt.Errorf("segment: append to %s: record %d: %d bytes, maximum %d: %w", l.dir, i, len(p), l.opts.Log.MaxPayloadSize, log.ErrPayloadTooLarge)
	}
	return nil
}

// write runs fn, an append of need bytes of frames, on the active segment
// with rollMu held shared, after reserving the bytes; when the active
// segment cannot take them it rolls first.
func (l *Log) write(need int64, fn func(a *activeSegment) error) error {
	for {
		l.rollMu.RLock()
		if err := l.writableLocked(); err != nil {
			l.rollMu.RUnlock()
			return err
		}
		a := l.active
		if need == 0 || l.reserve(a, need) {
			err := fn(a)
			if err != nil {
				a.reserved.Add(-need)
			}
			l.rollMu.RUnlock()
			return err
		}
		l.rollMu.RUnlock()
		if err := l.roll(a, need); err != nil {
			return err
		}
	}
}

// reserve adds need bytes to the active segment's reservation and reports
// true, or reports false when the segment must roll first: it holds
// records and either the batch would take it past SegmentBytes or its
// first record is SegmentAge old. An empty segment takes any batch.
func (l *Log) reserve(a *activeSegment, need int64) bool {
	if l.tooOld(a) {
		return false
	}
	limit := l.segBytes.Load()
	for {
		cur := a.reserved.Load()
		if cur > 0 && cur+need > limit {
			return false
		}
		if a.reserved.CompareAndSwap(cur, cur+need) {
			return true
		}
	}
}

// tooOld reports whether the active segment's first record is at least
// SegmentAge old.
func (l *Log) tooOld(a *activeSegment) bool {
	if !a.hasFirst.Load() {
		return false
	}
	first, now := a.firstTS.Load(), l.opts.Log.Now().UnixNano()
	return first < now && uint64(now)-uint64(first) >= uint64(time.Duration(l.segAge.Load()))
}

// mustRollLocked is reserve's verdict without reserving; rollMu must be
// held exclusively, so the reservation is exactly what was written.
func (l *Log) mustRollLocked(a *activeSegment, need int64) bool {
	cur := a.reserved.Load()
	return cur > 0 && (cur+need > l.segBytes.Load() || l.tooOld(a))
}
