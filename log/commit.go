package log

import (
	"errors"
	"fmt"
)

// Group commit.
//
// Every append builds its frames, takes the next offsets under l.mu and
// queues a request. The first appender that finds no writer becomes the
// writer: it takes everything queued as one batch, writes the batch with one
// positional write and one fsync with l.mu released, publishes the new
// records to readers and wakes the batch's callers. If more requests queued
// up meanwhile, it hands the writer slot to the oldest of them and returns,
// so no caller writes other callers' batches for long and each returns soon
// after its own record is durable. Nothing waits for a timer: a lone
// appender writes its record at once, and a batch is whatever piled up
// during the previous fsync.

// request is one append call waiting for its batch.
type request struct {
	// frames are the call's encoded records, offsets already stamped.
	frames []byte
	// count is the number of records in frames.
	count int
	// done receives one value: either the request is finished (err says
	// how) or, when lead is set, its caller now owns the writer slot.
	done chan struct{}
	lead bool
	err  error
}

func newRequest(frames []byte, count int) *request {
	return &request{frames: frames, count: count, done: make(chan struct{}, 1)}
}

// commitLocked queues req and waits until it is durable or has failed.
// l.mu must be held; commitLocked releases it.
func (l *Log) commitLocked(req *request) error {
	l.queue = append(l.queue, req)
	if l.writing {
		l.mu.Unlock()
		<-req.done
		if !req.lead {
			return req.err
		}
		// The previous writer handed the slot over; req is still queued
		// and goes out in the batch written below.
		l.mu.Lock()
	}
	l.writing = true
	l.writeBatchLocked(req)
	if len(l.queue) > 0 {
		next := l.queue[0]
		next.lead = true
		next.done <- struct{}{}
	} else {
		l.writing = false
		l.idle.Broadcast()
	}
	l.mu.Unlock()
	return req.err
}

// writeBatchLocked writes and fsyncs everything queued as one batch, then
// publishes it to readers and wakes its callers (except self, the writer).
// l.mu must be held; it is released around the disk I/O.
func (l *Log) writeBatchLocked(self *request) {
	batch := l.queue
	l.queue = l.spare[:0]
	pos := l.writeEnd
	l.mu.Unlock()

	buf := batch[0].frames
	if len(batch) > 1 {
		buf = l.scratch[:0]
		for _, r := range batch {
			buf = append(buf, r.frames...)
		}
		if cap(buf) <= maxScratch {
			l.scratch = buf
		}
	}
	_, err := l.file.WriteAt(buf, pos)
	if err != nil {
		err = fmt.Errorf("write %d bytes at byte %d: %w", len(buf), pos, err)
	} else if err = l.sync(l.file); err != nil {
		err = fmt.Errorf("fsync after writing %d bytes at byte %d: %w", len(buf), pos, err)
	}

	l.mu.Lock()
	if err != nil {
		l.failLocked(err, batch, self)
	} else {
		l.publish(batch, pos, pos+int64(len(buf)))
		l.writeEnd = pos + int64(len(buf))
		for _, r := range batch {
			if r != self {
				r.done <- struct{}{}
			}
		}
	}
	clear(batch)
	l.spare = batch[:0]
}

// maxScratch bounds the batch buffer the writer keeps between batches.
const maxScratch = 4 << 20

// publish makes a durable batch visible to readers.
func (l *Log) publish(batch []*request, from, to int64) {
	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	p := from
	for _, r := range batch {
		at := 0
		for range r.count {
			l.positions = append(l.positions, p+int64(at))
			at += FrameSize(int(decodeHeader(r.frames[at:]).payloadLength))
		}
		p += int64(len(r.frames))
	}
	l.end = to
}

// failLocked makes a write error sticky, fails every caller of the batch
// with it and every queued caller with ErrFailed, and tries to cut the file
// back to the last acknowledged byte so that a reopen finds exactly the
// acknowledged records. l.mu must be held.
func (l *Log) failLocked(err error, batch []*request, self *request) {
	if terr := l.file.Truncate(l.writeEnd); terr != nil {
		err = errors.Join(err, fmt.Errorf("cut back to byte %d: %w", l.writeEnd, terr))
	}
	l.failed = err
	for _, r := range batch {
		r.err = err
		if r != self {
			r.done <- struct{}{}
		}
	}
	for _, r := range l.queue {
		r.err = fmt.Errorf("%w: %w", ErrFailed, err)
		r.done <- struct{}{}
	}
	clear(l.queue)
	l.queue = l.queue[:0]
}
