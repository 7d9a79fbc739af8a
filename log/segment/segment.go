package segment

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// Log is a replica's log kept as a directory of segment files: sealed,
// read-only segments and one active segment that takes appends.
//
// A Log is safe for concurrent use. Appends to the active segment hold
// rollMu shared, so concurrent appenders still meet in the active
// log.Log's group commit; a roll holds it exclusively, so a segment is
// sealed only once every append to it has returned. Reads hold segMu
// shared across their disk read and never wait for an append.
//
// Lock order: adminMu, then rollMu, then segMu.
type Log struct {
	dir  string
	opts Options
	fs   durable.FS

	// segBytes and segAge are the roll thresholds (SetSegmentOptions).
	segBytes atomic.Int64
	segAge   atomic.Int64

	// adminMu serialises the operations that change the segments other
	// than a roll: Truncate, AdvanceStart, ResetTo and Close.
	adminMu sync.Mutex

	// rollMu is held shared by an append for the whole of its write to the
	// active segment and exclusively by whatever replaces or cuts the
	// active segment (a roll, Truncate, ResetTo, Close).
	rollMu sync.RWMutex
	// failed is the sticky error of a failed roll, deletion or cut; once
	// set, every write is refused. Written with rollMu held exclusively.
	failed error
	// closed is set by Close, with rollMu and segMu held exclusively.
	closed bool

	// segMu guards the list of segments and the log start. Readers hold
	// it shared for the whole of their disk read, so a file is never
	// closed under them.
	segMu sync.RWMutex
	// sealed are the sealed segments, oldest first.
	sealed []*sealedSegment
	// active is the last segment, the one appends go to.
	active *activeSegment
	// start is the persisted (or implied) log start; LogStart is the
	// larger of it and the first segment's base.
	start uint64

	// rebuiltMu guards rebuilt: the sidecars rebuilt, with the reason, by
	// Open or by the first read of a segment whose index was damaged.
	rebuiltMu sync.Mutex
	rebuilt   []string
}

// sealedSegment is a read-only segment: its file, a few numbers from its
// sidecar's header and, once it has been read, a thinned copy of the
// sidecar's sparse index. Apart from that index it is immutable; the file
// is closed once the segment leaves the list.
type sealedSegment struct {
	base, next uint64
	size       int64
	maxTS      int64
	path       string
	file       durable.File

	// idxMu guards thin and loaded. Open reads only each sidecar's
	// checked header; the index is loaded when the segment is first read
	// (index), as Kafka loads a segment's index files lazily.
	idxMu  sync.Mutex
	loaded bool
	// thin holds every thinStride-th sidecar entry: 8 bytes per
	// thinStride*IndexInterval bytes of frames.
	thin []thinEntry
}

// thinEntry locates one record of a sealed segment.
type thinEntry struct{ rel, pos uint32 }

// thinStride is how many sidecar entries make one in-memory entry: with the
// default 4 KiB interval, 8 bytes per 16 KiB, 512 bytes per MiB.
const thinStride = 4

// newSealed is the sealed segment a sidecar describes. A sidecar with its
// entries gives the thin index at once; one read from its header alone
// leaves it to index.
func newSealed(path string, f durable.File, sc *sidecar) *sealedSegment {
	s := &sealedSegment{base: sc.base, next: sc.next(), size: sc.size, maxTS: sc.maxTS, path: path, file: f}
	if sc.entries != nil || sc.count == 0 {
		s.thin, s.loaded = thinOut(sc.entries), true
	}
	return s
}

// thinOut keeps every thinStride-th entry.
func thinOut(entries []indexEntry) []thinEntry {
	thin := make([]thinEntry, 0, (len(entries)+thinStride-1)/thinStride)
	for i := 0; i < len(entries); i += thinStride {
		thin = append(thin, thinEntry{rel: entries[i].rel, pos: entries[i].pos})
	}
	return thin
}

// index returns the segment's thin index, loading it on first use from the
// whole sidecar. A sidecar whose index is damaged (its header was whole at
// Open) is rebuilt from the segment, written again and reported, as Open
// does for a damaged header. l.segMu must be held (shared is enough): the
// segment cannot leave the list meanwhile.
func (s *sealedSegment) index(l *Log) ([]thinEntry, error) {
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if s.loaded {
		return s.thin, nil
	}
	scPath := l.sidecarPath(s.base)
	sc, err := readSidecar(l.fs, scPath, s.size)
	if err == nil && (sc.base != s.base || sc.size != s.size || sc.next() != s.next) {
		err = fmt.Errorf("%w: its index disagrees with its header", ErrSidecar)
	}
	if err != nil {
		reason := err.Error()
		if sc, err = buildSidecar(s.path, s.file, s.size, s.base, l.opts.IndexInterval); err != nil {
			return nil, err
		}
		if sc.next() != s.next {
			return nil, &log.CorruptionError{Path: s.path, Pos: s.size, Offset: sc.next(), OffsetKnown: true,
				Reason: fmt.Sprintf("sealed segment ends before offset %d but its sidecar says %d", sc.next(), s.next)}
		}
		if err := writeSidecar(l.fs, scPath, encodeSidecar(nil, sc)); err != nil {
			return nil, err
		}
		l.noteRebuilt(fmt.Sprintf("%s: %s", scPath, reason))
	}
	s.thin, s.loaded = thinOut(sc.entries), true
	return s.thin, nil
}

func (s *sealedSegment) info() SegmentInfo {
	return SegmentInfo{Base: s.base, Next: s.next, Size: s.size, MaxTimestamp: s.maxTS, Sealed: true, Path: s.path}
}

// activeSegment is the segment appends go to: a phase-1 log.Log opened at
// the segment's base, plus what rolling and SegmentInfo need to know.
type activeSegment struct {
	base uint64
	path string
	log  *log.Log

	// reserved counts the bytes of frames written or being written; an
	// appender adds its batch before writing, so concurrent appenders
	// agree on when the segment is full.
	reserved atomic.Int64
	// firstTS is the timestamp of the record at base, once hasFirst.
	firstTS  atomic.Int64
	hasFirst atomic.Bool
	// appendedMax is the largest timestamp appended since the segment was
	// opened (math.MinInt64 before the first).
	appendedMax atomic.Int64
	// openNext is NextOffset when the segment was opened: the records
	// below it were found on disk.
	openNext uint64

	// tsMu guards openMax, the largest timestamp of the records found on
	// disk, computed the first time it is asked for.
	tsMu         sync.Mutex
	openMax      int64
	openMaxKnown bool
}

// newActive wraps an open segment log.
func newActive(path string, l *log.Log) (*activeSegment, error) {
	a := &activeSegment{base: l.BaseOffset(), path: path, log: l, openNext: l.NextOffset()}
	a.reserved.Store(l.Size())
	a.appendedMax.Store(math.MinInt64)
	if a.openNext > a.base {
		recs, err := l.Read(a.base, 1)
		if err != nil {
			return nil, err
		}
		a.firstTS.Store(recs[0].Timestamp)
		a.hasFirst.Store(true)
	} else {
		a.openMaxKnown, a.openMax = true, math.MinInt64
	}
	return a, nil
}

// appended records what a successful append wrote.
func (a *activeSegment) appended(first uint64, firstTS, maxTS int64) {
	if first == a.base {
		a.firstTS.Store(firstTS)
		a.hasFirst.Store(true)
	}
	for {
		cur := a.appendedMax.Load()
		if maxTS <= cur || a.appendedMax.CompareAndSwap(cur, maxTS) {
			return
		}
	}
}

// maxTimestamp is the largest timestamp in the segment, math.MinInt64 when
// it is empty. The first call reads the records that were on disk at open.
func (a *activeSegment) maxTimestamp() (int64, error) {
	a.tsMu.Lock()
	defer a.tsMu.Unlock()
	if !a.openMaxKnown {
		m := int64(math.MinInt64)
		for off := a.base; off < a.openNext; {
			recs, err := a.log.Read(off, 4096)
			if err != nil {
				return 0, err
			}
			for _, r := range recs {
				m = max(m, r.Timestamp)
			}
			off += uint64(len(recs))
		}
		a.openMax, a.openMaxKnown = m, true
	}
	return max(a.openMax, a.appendedMax.Load()), nil
}

// SegmentInfo describes one segment.
type SegmentInfo struct {
	// Base is the segment's first offset, the number in its file name.
	Base uint64
	// Next is one past its last offset (Base when it is empty).
	Next uint64
	// Size is the bytes of its durable frames.
	Size int64
	// MaxTimestamp is the largest record timestamp in it; math.MinInt64
	// when it is empty.
	MaxTimestamp int64
	// Sealed is false for the active segment.
	Sealed bool
	// Path is the segment file.
	Path string
}

// Dir is the log's directory.
func (l *Log) Dir() string { return l.dir }

// MaxPayloadSize is the largest payload the log accepts.
func (l *Log) MaxPayloadSize() int { return l.opts.Log.MaxPayloadSize }

// Rebuilt lists the sidecars Open found missing or damaged and rebuilt from
// their segments, each as "path: reason". Options.Logf was told too.
func (l *Log) Rebuilt() []string {
	l.rebuiltMu.Lock()
	defer l.rebuiltMu.Unlock()
	return append([]string(nil), l.rebuilt...)
}

// noteRebuilt records and reports a rebuilt sidecar.
func (l *Log) noteRebuilt(note string) {
	l.rebuiltMu.Lock()
	l.rebuilt = append(l.rebuilt, note)
	l.rebuiltMu.Unlock()
	l.opts.Logf("segment: rebuilt sidecar %s", note)
}

// NextOffset is the offset the next record will get. Appends in flight are
// not counted.
func (l *Log) NextOffset() uint64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.active.log.NextOffset()
}

// ActiveBase is the base offset of the segment being written: it changes
// exactly when the log rolls to a new segment (or is truncated into an
// older one).
func (l *Log) ActiveBase() uint64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.active.base
}

// LogStart is the first readable offset: the larger of the persisted start
// (AdvanceStart, ResetTo) and the first segment's base.
func (l *Log) LogStart() uint64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.logStartLocked()
}

// logStartLocked is LogStart; l.segMu must be held.
func (l *Log) logStartLocked() uint64 {
	first := l.active.base
	if len(l.sealed) > 0 {
		first = l.sealed[0].base
	}
	return max(l.start, first)
}

// Size is the number of bytes of durable frames over all segments,
// including any part of the first segment below LogStart.
func (l *Log) Size() int64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	n := l.active.log.Size()
	for _, s := range l.sealed {
		n += s.size
	}
	return n
}

// Segments describes every segment, oldest first, the active one last.
func (l *Log) Segments() []SegmentInfo {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	out := make([]SegmentInfo, 0, len(l.sealed)+1)
	for _, s := range l.sealed {
		out = append(out, s.info())
	}
	a := l.active
	maxTS, err := a.maxTimestamp()
	if err != nil {
		// Read errors of the active segment surface through Read; here the
		// timestamp stays unknown, which retention never needs.
		maxTS = math.MinInt64
	}
	return append(out, SegmentInfo{Base: a.base, Next: a.log.NextOffset(), Size: a.log.Size(), MaxTimestamp: maxTS, Path: a.path})
}

// Failed returns the sticky error that makes the log refuse writes
// (wrapping log.ErrFailed), or nil while it takes them: a failed roll,
// deletion or cut, or a failed write of the active segment.
func (l *Log) Failed() error {
	l.rollMu.RLock()
	defer l.rollMu.RUnlock()
	if l.failed != nil {
		return fmt.Errorf("segment: %s: %w: %w", l.dir, log.ErrFailed, l.failed)
	}
	return l.active.log.Failed()
}

// writableLocked reports why the log cannot take writes, if it cannot.
// l.rollMu must be held (shared is enough).
func (l *Log) writableLocked() error {
	if l.closed {
		return fmt.Errorf("segment: %s: %w", l.dir, log.ErrClosed)
	}
	if l.failed != nil {
		return fmt.Errorf("segment: %s: %w: %w", l.dir, log.ErrFailed, l.failed)
	}
	return nil
}

// SetSegmentOptions changes the roll thresholds of a running log, validated
// as Open validates them (0 means the default). The next append applies
// them; the active segment rolls then if it is already past them.
func (l *Log) SetSegmentOptions(bytes int64, age time.Duration) error {
	if bytes == 0 {
		bytes = DefaultSegmentBytes
	}
	if age == 0 {
		age = DefaultSegmentAge
	}
	if err := checkSegmentOptions(bytes, age); err != nil {
		return err
	}
	// Two stores, not one: an append between them sees the new size with
	// the old age, which is a valid configuration too.
	l.segBytes.Store(bytes)
	l.segAge.Store(int64(age))
	return nil
}

// Close waits for appends in flight and closes every segment. Every
// operation after Close returns an error wrapping log.ErrClosed; closing
// twice is harmless.
func (l *Log) Close() error {
	l.adminMu.Lock()
	defer l.adminMu.Unlock()
	l.rollMu.Lock()
	defer l.rollMu.Unlock()
	l.segMu.Lock()
	defer l.segMu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.active.log.Close()
	for _, s := range l.sealed {
		if cerr := s.file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("segment: close %s: %w", s.path, cerr)
		}
	}
	return err
}

// segmentPath and sidecarPath name the files of the segment at base.
func (l *Log) segmentPath(base uint64) string { return filepath.Join(l.dir, SegmentFileName(base)) }
func (l *Log) sidecarPath(base uint64) string { return filepath.Join(l.dir, SidecarFileName(base)) }

// openActive opens (creating if missing) the segment at base as a log.Log.
func (l *Log) openActive(base uint64) (*activeSegment, error) {
	opts := l.opts.Log
	opts.BaseOffset = base
	path := l.segmentPath(base)
	lg, err := log.OpenWithOptions(path, opts)
	if err != nil {
		return nil, err
	}
	a, err := newActive(path, lg)
	if err != nil {
		_ = lg.Close()
		return nil, err
	}
	return a, nil
}

// writeSidecar durably writes a sidecar: create or truncate, write, fsync,
// then fsync the directory. No temp file is needed: a sidecar cut short by
// a crash fails its checksum and is rebuilt, and one left on the last
// segment is dropped (doc.go § Recovery).
func writeSidecar(fsys durable.FS, path string, data []byte) error {
	err := durable.WriteSynced(fsys, path, data)
	if err == nil {
		err = durable.SyncDir(fsys, filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("segment: write sidecar %s: %w", path, err)
	}
	return nil
}

// removeSegmentFiles durably deletes the segment file at base and then its
// sidecar, fsyncing the directory after each, so that a crash leaves either
// the whole segment, or an orphan sidecar that Open removes, or nothing.
func (l *Log) removeSegmentFiles(base uint64) error {
	for _, p := range []string{l.segmentPath(base), l.sidecarPath(base)} {
		if err := l.fs.Remove(p); err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return fmt.Errorf("segment: remove %s: %w", p, err)
		}
		if err := durable.SyncDir(l.fs, l.dir); err != nil {
			return fmt.Errorf("segment: remove %s: %w", p, err)
		}
	}
	return nil
}
