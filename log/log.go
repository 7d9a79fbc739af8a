package log

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pystream/pystream/log/durable"
)

// DefaultMaxPayloadSize is the largest payload a log accepts unless
// Options.MaxPayloadSize says otherwise: 1 MiB.
const DefaultMaxPayloadSize = 1 << 20

// Options tune a log. The zero value is ready to use.
type Options struct {
	// MaxPayloadSize is the largest payload, in bytes, that appends accept.
	// Zero means DefaultMaxPayloadSize; it may not exceed MaxFramePayload.
	MaxPayloadSize int
	// FS is the file system the log uses. Nil means durable.OS.
	FS durable.FS
	// Now supplies append timestamps. Nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	switch {
	case o.MaxPayloadSize == 0:
		o.MaxPayloadSize = DefaultMaxPayloadSize
	case o.MaxPayloadSize < 0 || o.MaxPayloadSize > MaxFramePayload:
		return o, fmt.Errorf("log: MaxPayloadSize %d out of range 1..%d: %w", o.MaxPayloadSize, MaxFramePayload, ErrInvalidArgument)
	}
	if o.FS == nil {
		o.FS = durable.OS
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Log is a durable, append-only sequence of records stored in one file.
//
// A Log is safe for concurrent use. Concurrent appends are committed
// together: whichever caller finds the log idle writes every record that is
// waiting in one write and one fsync (group commit), and each caller returns
// only once its own records are durable.
type Log struct {
	path       string
	fs         durable.FS
	file       durable.File
	maxPayload int
	now        func() time.Time

	// mu guards the write side: the queue of waiting appends, the writer
	// slot and the log's state. It is never held across disk I/O except
	// by Truncate.
	mu sync.Mutex
	// idle is signalled whenever writing turns false.
	idle *sync.Cond
	// next is the offset the next queued record gets.
	next uint64
	// queue holds appends waiting for the next batch.
	queue []*request
	// writing is true while one goroutine owns the writer slot.
	writing bool
	// writeEnd is the byte position where the next batch is written.
	writeEnd int64
	// failed is the sticky write error; once set, every write is refused.
	failed error
	// closed is set by Close.
	closed bool
	// scratch joins the frames of a batch; only the writer uses it.
	scratch []byte

	// idxMu guards the durable view that readers use: only records that
	// are written and fsync-ed appear here.
	idxMu sync.RWMutex
	// positions[i] is the byte position of the frame of offset i.
	positions []int64
	// end is the byte position just past the last durable record.
	end int64
	// fileClosed is set once the file is closed.
	fileClosed bool
}

// request is one append call waiting for its batch.
type request struct {
	frames []byte
	count  int
	done   chan struct{}
	err    error
}

// Open opens the log file at path, creating it (and any missing parent
// directories) when it does not exist. An existing file is scanned to
// rebuild the offset index; a file that is not a contiguous run of whole
// records from offset 0 returns a *CorruptionError and is left unchanged.
func Open(path string) (*Log, error) {
	return OpenWithOptions(path, Options{})
}

// OpenWithOptions is Open with explicit options.
func OpenWithOptions(path string, opts Options) (*Log, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	fsys := opts.FS
	dir := filepath.Dir(path)
	if _, err := durable.MkdirAll(fsys, dir); err != nil {
		return nil, fmt.Errorf("log: open %s: %w", path, err)
	}
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			if serr := durable.SyncDir(fsys, dir); serr != nil {
				return nil, errors.Join(fmt.Errorf("log: open %s: %w", path, serr), f.Close())
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("log: open %s: %w", path, err)
	}
	info, err := f.Stat()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("log: open %s: %w", path, err), f.Close())
	}
	if !info.Mode().IsRegular() {
		return nil, errors.Join(fmt.Errorf("log: open %s: not a regular file: %w", path, ErrInvalidArgument), f.Close())
	}
	res, err := scan(path, f, info.Size(), nil)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	l := &Log{
		path:       path,
		fs:         fsys,
		file:       f,
		maxPayload: opts.MaxPayloadSize,
		now:        opts.Now,
		next:       uint64(len(res.positions)),
		writeEnd:   res.end,
		positions:  res.positions,
		end:        res.end,
	}
	l.idle = sync.NewCond(&l.mu)
	return l, nil
}

// Path is the log's file.
func (l *Log) Path() string { return l.path }

// MaxPayloadSize is the largest payload the log accepts.
func (l *Log) MaxPayloadSize() int { return l.maxPayload }

// Append assigns payload the next offset and the current wall-clock time,
// writes its frame and fsyncs it, and only then returns the record. The
// returned record's payload is the log's own copy.
func (l *Log) Append(payload []byte) (Record, error) {
	recs, err := l.AppendBatch([][]byte{payload})
	if err != nil {
		return Record{}, err
	}
	return recs[0], nil
}

// AppendBatch appends several payloads as consecutive records with one write
// and one fsync, and returns them in order. Either every record of the batch
// is acknowledged or the call fails. An empty batch does nothing.
func (l *Log) AppendBatch(payloads [][]byte) ([]Record, error) {
	size := 0
	for i, p := range payloads {
		if err := l.checkPayload(p); err != nil {
			return nil, fmt.Errorf("log: append to %s: record %d: %w", l.path, i, err)
		}
		size += FrameSize(len(p))
	}
	if len(payloads) == 0 {
		return nil, nil
	}
	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	ts := l.now().UnixNano()
	req := &request{frames: make([]byte, 0, size), count: len(payloads), done: make(chan struct{})}
	recs := make([]Record, len(payloads))
	for i, p := range payloads {
		start := len(req.frames) + HeaderSize
		req.frames = AppendFrame(req.frames, Record{Offset: l.next + uint64(i), Timestamp: ts, Payload: p})
		recs[i] = Record{Offset: l.next + uint64(i), Timestamp: ts, Payload: req.frames[start:len(req.frames):len(req.frames)]}
	}
	l.next += uint64(len(payloads))
	if err := l.commitLocked(req); err != nil {
		return nil, fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	return recs, nil
}

// AppendRecord stores a record whose offset and timestamp were assigned
// elsewhere, as a follower replica does with its leader's records. The
// record's offset must equal NextOffset; otherwise nothing is written and the
// error wraps ErrOffsetMismatch.
func (l *Log) AppendRecord(rec Record) error {
	return l.AppendRecords([]Record{rec})
}

// AppendRecords stores consecutive records assigned elsewhere with one write
// and one fsync. The first offset must equal NextOffset and the rest must
// follow it without gaps; otherwise nothing is written.
func (l *Log) AppendRecords(recs []Record) error {
	size := 0
	for i, r := range recs {
		if err := l.checkPayload(r.Payload); err != nil {
			return fmt.Errorf("log: append to %s: record %d: %w", l.path, i, err)
		}
		size += FrameSize(len(r.Payload))
	}
	if len(recs) == 0 {
		return nil
	}
	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	req := &request{frames: make([]byte, 0, size), count: len(recs), done: make(chan struct{})}
	for i, r := range recs {
		if want := l.next + uint64(i); r.Offset != want {
			l.mu.Unlock()
			return fmt.Errorf("log: append to %s: record offset %d, next offset %d: %w", l.path, r.Offset, want, ErrOffsetMismatch)
		}
		req.frames = AppendFrame(req.frames, r)
	}
	l.next += uint64(len(recs))
	if err := l.commitLocked(req); err != nil {
		return fmt.Errorf("log: append to %s: %w", l.path, err)
	}
	return nil
}

func (l *Log) checkPayload(p []byte) error {
	if len(p) > l.maxPayload {
		return fmt.Errorf("%d bytes, maximum %d: %w", len(p), l.maxPayload, ErrPayloadTooLarge)
	}
	return nil
}

// writableLocked reports why the log cannot take writes, if it cannot.
// Lock should be held.
func (l *Log) writableLocked() error {
	if l.closed {
		return ErrClosed
	}
	if l.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, l.failed)
	}
	return nil
}

// commitLocked queues req and waits until it is durable or has failed. If no
// one holds the writer slot, the caller takes it and writes batches until the
// queue is empty. Lock must be held; commitLocked releases it.
func (l *Log) commitLocked(req *request) error {
	l.queue = append(l.queue, req)
	if l.writing {
		l.mu.Unlock()
		<-req.done
		return req.err
	}
	l.writing = true
	l.writeBatchesLocked()
	l.writing = false
	l.idle.Broadcast()
	l.mu.Unlock()
	return req.err
}

// writeBatchesLocked writes and fsyncs everything queued, batch after batch,
// and then publishes each batch to readers and wakes its callers. Lock must
// be held; it is released around the disk I/O.
func (l *Log) writeBatchesLocked() {
	for len(l.queue) > 0 {
		batch := l.queue
		l.queue = nil
		pos := l.writeEnd
		l.mu.Unlock()

		buf := batch[0].frames
		if len(batch) > 1 {
			buf = l.scratch[:0]
			for _, r := range batch {
				buf = append(buf, r.frames...)
			}
			if cap(buf) <= 4<<20 {
				l.scratch = buf
			}
		}
		_, err := l.file.WriteAt(buf, pos)
		if err == nil {
			err = l.file.Sync()
		}

		l.mu.Lock()
		if err != nil {
			l.failLocked(err)
			for _, r := range batch {
				r.err = err
				close(r.done)
			}
			for _, r := range l.queue {
				r.err = fmt.Errorf("%w: %w", ErrFailed, err)
				close(r.done)
			}
			l.queue = nil
			return
		}
		l.idxMu.Lock()
		p := pos
		for _, r := range batch {
			at := 0
			for i := 0; i < r.count; i++ {
				l.positions = append(l.positions, p+int64(at))
				at += HeaderSize + int(decodeHeader(r.frames[at:]).payloadLength)
			}
			p += int64(len(r.frames))
		}
		l.end = pos + int64(len(buf))
		l.idxMu.Unlock()
		l.writeEnd = l.end
		for _, r := range batch {
			close(r.done)
		}
	}
}

// failLocked makes a write error sticky and tries to cut the file back to the
// last acknowledged byte, so that a reopen finds exactly the acknowledged
// records. Lock must be held.
func (l *Log) failLocked(err error) {
	if terr := l.file.Truncate(l.writeEnd); terr != nil {
		err = errors.Join(err, fmt.Errorf("cut back to byte %d: %w", l.writeEnd, terr))
	}
	l.failed = err
}

// Read returns up to maxRecords records starting at offset start. Past the
// end it returns no records and no error. Only durable records are visible.
// The records are the caller's to keep. Read does not wait for appends.
func (l *Log) Read(start uint64, maxRecords int) ([]Record, error) {
	if maxRecords < 1 {
		return nil, fmt.Errorf("log: read %s: maxRecords %d < 1: %w", l.path, maxRecords, ErrInvalidArgument)
	}
	l.idxMu.RLock()
	defer l.idxMu.RUnlock()
	if l.fileClosed {
		return nil, fmt.Errorf("log: read %s: %w", l.path, ErrClosed)
	}
	n := uint64(len(l.positions))
	if start >= n {
		return nil, nil
	}
	stop := n
	if uint64(maxRecords) < n-start {
		stop = start + uint64(maxRecords)
	}
	from, to := l.positions[start], l.end
	if stop < n {
		to = l.positions[stop]
	}
	buf := make([]byte, to-from)
	if _, err := l.file.ReadAt(buf, from); err != nil {
		return nil, fmt.Errorf("log: read %s at byte %d: %w", l.path, from, err)
	}
	recs := make([]Record, 0, stop-start)
	at := 0
	for off := start; off < stop; off++ {
		h := decodeHeader(buf[at:])
		end := at + HeaderSize + int(h.payloadLength)
		if !h.consistent() || h.offset != off || end > len(buf) {
			return nil, &CorruptionError{Path: l.path, Pos: from + int64(at), Offset: off, OffsetKnown: true, Reason: "frame changed on disk after it was written"}
		}
		recs = append(recs, Record{Offset: h.offset, Timestamp: h.timestamp, Payload: buf[at+HeaderSize : end : end]})
		at = end
	}
	return recs, nil
}

// NextOffset is the offset the next record will get: the number of durable
// records in the log. Appends still in flight are not counted.
func (l *Log) NextOffset() uint64 {
	l.idxMu.RLock()
	defer l.idxMu.RUnlock()
	return uint64(len(l.positions))
}

// Size is the number of bytes of durable records in the file.
func (l *Log) Size() int64 {
	l.idxMu.RLock()
	defer l.idxMu.RUnlock()
	return l.end
}

// Truncate durably drops every record with offset >= end: the file is cut
// and fsync-ed before Truncate returns. It waits for appends in flight. An
// end past NextOffset is an error; an end equal to it changes nothing.
func (l *Log) Truncate(end uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.writing {
		l.idle.Wait()
	}
	if err := l.writableLocked(); err != nil {
		return fmt.Errorf("log: truncate %s: %w", l.path, err)
	}
	if end > l.next {
		return fmt.Errorf("log: truncate %s to offset %d past the end %d: %w", l.path, end, l.next, ErrInvalidArgument)
	}
	if end == l.next {
		return nil
	}
	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	cut := l.positions[end]
	err := l.file.Truncate(cut)
	if err == nil {
		err = l.file.Sync()
	}
	if err != nil {
		l.failed = err
		return fmt.Errorf("log: truncate %s to offset %d: %w", l.path, end, err)
	}
	l.positions = l.positions[:end:end]
	l.end, l.writeEnd, l.next = cut, cut, end
	return nil
}

// Close waits for appends in flight and closes the file. Every operation
// after Close returns ErrClosed; closing twice is harmless.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	for l.writing {
		l.idle.Wait()
	}
	l.mu.Unlock()

	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	l.fileClosed = true
	if err := l.file.Close(); err != nil {
		return fmt.Errorf("log: close %s: %w", l.path, err)
	}
	return nil
}
