package log

import (
	"encoding/binary"
	"fmt"
)

// Append assigns payload the next offset and the current wall-clock time,
// writes its frame and fsyncs it, and only then returns the record. The
// returned record's payload is the log's own copy of payload. An empty
// payload is allowed; one above MaxPayloadSize is refused with
// ErrPayloadTooLarge and nothing is written.
func (l *Log) Append(payload []byte) (Record, error) {
	if err := l.checkPayload(payload); err != nil {
		return Record{}, fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	// The frame is built outside the lock; the offset and timestamp are
	// patched in once they are assigned.
	frames := AppendFrame(make([]byte, 0, FrameSize(len(payload))), Record{Payload: payload})
	req := newRequest(frames, 1)

	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return Record{}, fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	rec := Record{Offset: l.next, Timestamp: l.now().UnixNano(), Payload: frames[HeaderSize:len(frames):len(frames)]}
	stamp(frames, rec.Offset, rec.Timestamp)
	l.next++
	if err := l.commitLocked(req); err != nil {
		return Record{}, fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	return rec, nil
}

// AppendBatch appends several payloads as consecutive records with one write
// and one fsync, and returns them in order. Either every record of the batch
// is acknowledged or the call fails; a payload above MaxPayloadSize fails the
// whole batch before anything is written. An empty batch writes nothing.
// Every record of a batch gets the same timestamp.
func (l *Log) AppendBatch(payloads [][]byte) ([]Record, error) {
	size := 0
	for i, p := range payloads {
		if err := l.checkPayload(p); err != nil {
			return nil, fmt.Errorf("log: append to %s: record %d: %w", l.path, i, err)
		}
		size += FrameSize(len(p))
	}
	frames := make([]byte, 0, size)
	recs := make([]Record, len(payloads))
	for i, p := range payloads {
		frames = AppendFrame(frames, Record{Payload: p})
		recs[i].Payload = frames[len(frames)-len(p) : len(frames) : len(frames)]
	}

	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	if len(payloads) == 0 {
		l.mu.Unlock()
		return nil, nil
	}
	ts := l.now().UnixNano()
	at := 0
	for i := range recs {
		recs[i].Offset, recs[i].Timestamp = l.next+uint64(i), ts
		stamp(frames[at:], recs[i].Offset, ts)
		at += FrameSize(len(recs[i].Payload))
	}
	l.next += uint64(len(recs))
	req := newRequest(frames, len(recs))
	if err := l.commitLocked(req); err != nil {
		return nil, fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	return recs, nil
}

// AppendRecord stores a record whose offset and timestamp were assigned
// elsewhere, as a follower replica does with its leader's records. The
// record's offset must equal NextOffset (counting appends in flight);
// otherwise nothing is written and the error wraps ErrOffsetMismatch.
func (l *Log) AppendRecord(rec Record) error {
	return l.AppendRecords([]Record{rec})
}

// AppendRecords stores consecutive records assigned elsewhere with one write
// and one fsync. The first offset must equal NextOffset and the rest must
// follow it without gaps; otherwise nothing is written and the error wraps
// ErrOffsetMismatch. An empty slice writes nothing.
func (l *Log) AppendRecords(recs []Record) error {
	size := 0
	for i, r := range recs {
		if err := l.checkPayload(r.Payload); err != nil {
			return fmt.Errorf("log: append to %s: record %d: %w", l.path, i, err)
		}
		size += FrameSize(len(r.Payload))
	}
	frames := make([]byte, 0, size)
	for _, r := range recs {
		frames = AppendFrame(frames, r)
	}

	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	if len(recs) == 0 {
		l.mu.Unlock()
		return nil
	}
	for i, r := range recs {
		if want := l.next + uint64(i); r.Offset != want {
			l.mu.Unlock()
			return fmt.Errorf("log: append to %s: record %d has offset %d, want %d: %w", l.path, i, r.Offset, want, ErrOffsetMismatch)
		}
	}
	l.next += uint64(len(recs))
	req := newRequest(frames, len(recs))
	if err := l.commitLocked(req); err != nil {
		return fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	return nil
}

// stamp writes offset and timestamp into the header of the frame at the
// start of frame.
func stamp(frame []byte, offset uint64, timestamp int64) {
	binary.BigEndian.PutUint64(frame[4:12], offset)
	binary.BigEndian.PutUint64(frame[12:20], uint64(timestamp))
}

func (l *Log) checkPayload(p []byte) error {
	if len(p) > l.maxPayload {
		return fmt.Errorf("%d bytes, maximum %d: %w", len(p), l.maxPayload, ErrPayloadTooLarge)
	}
	return nil
}

// writableLocked reports why the log cannot take writes, if it cannot.
// l.mu must be held.
func (l *Log) writableLocked() error {
	if l.closed {
		return ErrClosed
	}
	if l.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, l.failed)
	}
	return nil
}
