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

// Log is a durable, append-only sequence of records stored in one file.
//
// A Log is safe for concurrent use. Concurrent appends are committed
// together (group commit, see commit.go): one write and one fsync carry every
// record that is waiting, and each caller returns only once its own records
// are durable. Reads never wait for appends and see only durable records.
//
// Lock order: mu, then fileMu, then idxMu. The writer never holds mu across
// disk I/O; Truncate does, because it must exclude appends.
type Log struct {
	path       string
	fs         durable.FS
	file       durable.File
	maxPayload int
	now        func() time.Time
	// sync makes an append durable: Options.Sync.
	sync func(durable.File) error
	// base is the offset of the file's first frame (Options.BaseOffset).
	base uint64

	// mu guards the write side: the queue of waiting appends, the writer
	// slot and the log's write state.
	mu sync.Mutex
	// idle is signalled whenever writing turns false.
	idle *sync.Cond
	// next is the offset the next queued record gets.
	next uint64
	// queue holds appends waiting for the next batch; spare is the
	// emptied slice of the previous batch, reused to avoid allocation.
	queue, spare []*request
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

	// fileMu is held shared by readers for the whole of their disk read and
	// exclusively by Truncate and Close, so that the file is never cut or
	// closed under a reader.
	fileMu sync.RWMutex
	// fileClosed is set once the file is closed.
	fileClosed bool

	// idxMu guards the durable view that readers use: only records that
	// are written and fsync-ed appear here. It is held only briefly.
	idxMu sync.RWMutex
	// positions[i] is the byte position of the frame of offset i.
	positions []int64
	// end is the byte position just past the last durable record.
	end int64
}

// Open opens the log file at path, creating it (and any missing parent
// directories) when it does not exist. An existing file is scanned to
// rebuild the offset index; a file that is not a contiguous run of whole
// records from offset 0 (Options.BaseOffset with OpenWithOptions) returns a
// *CorruptionError and is left unchanged.
func Open(path string) (*Log, error) {
	return OpenWithOptions(path, Options{})
}

// OpenWithOptions is Open with explicit options.
func OpenWithOptions(path string, opts Options) (*Log, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	fsys := opts.FS
	f, existed, err := openOrCreate(fsys, path)
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
	if existed {
		if err := syncExisting(fsys, path, f); err != nil {
			return nil, errors.Join(fmt.Errorf("log: open %s: %w", path, err), f.Close())
		}
	}
	res, err := scan(path, f, info.Size(), opts.BaseOffset, nil)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	l := &Log{
		path:       path,
		fs:         fsys,
		file:       f,
		maxPayload: opts.MaxPayloadSize,
		now:        opts.Now,
		sync:       opts.Sync,
		base:       opts.BaseOffset,
		next:       opts.BaseOffset + uint64(len(res.positions)),
		writeEnd:   res.end,
		positions:  res.positions,
		end:        res.end,
	}
	l.idle = sync.NewCond(&l.mu)
	return l, nil
}

// openOrCreate opens path for reading and writing. A missing file is
// created, after its missing parent directories, and its directory is
// fsync-ed so that the new entry survives a crash. existed reports whether
// the file was there already.
func openOrCreate(fsys durable.FS, path string) (f durable.File, existed bool, err error) {
	f, err = fsys.OpenFile(path, os.O_RDWR, 0)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return f, err == nil, err
	}
	dir := filepath.Dir(path)
	if _, err := durable.MkdirAll(fsys, dir); err != nil {
		return nil, false, err
	}
	f, err = fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, false, err
	}
	if err := durable.SyncDir(fsys, dir); err != nil {
		return nil, false, errors.Join(err, f.Close())
	}
	return f, false, nil
}

// syncExisting makes an existing log file and its directory entry durable
// before the log serves anything from it. The process that wrote the file
// may have died after a write but before its fsync, or after creating the
// file but before syncing its directory; without this, records served now,
// and the entry of the file that acknowledged appends go to, could still
// vanish in a power loss.
func syncExisting(fsys durable.FS, path string, f durable.File) error {
	if err := f.Sync(); err != nil {
		return err
	}
	return durable.SyncDir(fsys, filepath.Dir(path))
}

// Path is the log's file.
func (l *Log) Path() string { return l.path }

// MaxPayloadSize is the largest payload the log accepts.
func (l *Log) MaxPayloadSize() int { return l.maxPayload }

// Read returns up to maxRecords records starting at offset start. Past the
// end it returns no records and no error; maxRecords below 1, and a start
// below the log's base offset (Options.BaseOffset), are errors wrapping
// ErrInvalidArgument. Only durable records are visible. The records
// and their payloads are the caller's to keep and modify. Read does not wait
// for appends: it takes the index lock only to look up byte positions and
// reads the file with a positional read.
func (l *Log) Read(start uint64, maxRecords int) ([]Record, error) {
	if maxRecords < 1 {
		return nil, fmt.Errorf("log: read %s: maxRecords %d < 1: %w", l.path, maxRecords, ErrInvalidArgument)
	}
	if start < l.base {
		return nil, fmt.Errorf("log: read %s: offset %d below the base offset %d: %w", l.path, start, l.base, ErrInvalidArgument)
	}
	l.fileMu.RLock()
	defer l.fileMu.RUnlock()
	if l.fileClosed {
		return nil, fmt.Errorf("log: read %s: %w", l.path, ErrClosed)
	}
	from, to, count := l.span(start, maxRecords)
	if count == 0 {
		return nil, nil
	}
	buf := make([]byte, to-from)
	if _, err := l.file.ReadAt(buf, from); err != nil {
		return nil, fmt.Errorf("log: read %s at byte %d: %w", l.path, from, err)
	}
	recs := make([]Record, 0, count)
	at := 0
	for off := start; off < start+count; off++ {
		end := at + HeaderSize
		if end > len(buf) {
			return nil, l.changedOnDisk(from+int64(at), off)
		}
		h := decodeHeader(buf[at:])
		end += int(h.payloadLength)
		if !h.consistent() || h.offset != off || end > len(buf) {
			return nil, l.changedOnDisk(from+int64(at), off)
		}
		recs = append(recs, Record{Offset: h.offset, Timestamp: h.timestamp, Payload: buf[at+HeaderSize : end : end]})
		at = end
	}
	return recs, nil
}

// span finds the byte range [from, to) holding up to max durable records
// from offset start, and how many records it holds.
func (l *Log) span(start uint64, max int) (from, to int64, count uint64) {
	l.idxMu.RLock()
	defer l.idxMu.RUnlock()
	n := uint64(len(l.positions))
	i := start - l.base // start >= l.base: Read checked it
	if i >= n {
		return 0, 0, 0
	}
	count = min(uint64(max), n-i)
	from, to = l.positions[i], l.end
	if i+count < n {
		to = l.positions[i+count]
	}
	return from, to, count
}

func (l *Log) changedOnDisk(pos int64, off uint64) error {
	return &CorruptionError{Path: l.path, Pos: pos, Offset: off, OffsetKnown: true, Reason: "frame changed on disk after it was written"}
}

// NextOffset is the offset the next record will get: the base offset plus
// the number of durable records in the log. Appends still in flight are not
// counted.
func (l *Log) NextOffset() uint64 {
	l.idxMu.RLock()
	defer l.idxMu.RUnlock()
	return l.base + uint64(len(l.positions))
}

// BaseOffset is the offset of the file's first frame (Options.BaseOffset).
func (l *Log) BaseOffset() uint64 { return l.base }

// Size is the number of bytes of durable records in the file.
func (l *Log) Size() int64 {
	l.idxMu.RLock()
	defer l.idxMu.RUnlock()
	return l.end
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

	l.fileMu.Lock()
	defer l.fileMu.Unlock()
	l.fileClosed = true
	if err := l.file.Close(); err != nil {
		return fmt.Errorf("log: close %s: %w", l.path, err)
	}
	return nil
}

// Failed returns the sticky write error that makes the log refuse writes
// (wrapped in ErrFailed), or nil while it takes them. A failed log stays
// failed until it is closed and opened again: a reopen reads what is
// really on disk, which is the only way to know after a failed fsync.
func (l *Log) Failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrFailed, l.failed)
}
