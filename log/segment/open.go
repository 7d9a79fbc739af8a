package segment

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// Open opens the segmented log in dir, creating dir (durable.MkdirAll) and
// an empty first segment when there is none. It recovers as doc.go §
// Recovery describes: a legacy log.bin becomes the first segment; sidecars
// are read, and a missing or damaged one is rebuilt from its segment and
// reported (Rebuilt, Options.Logf); only the active (last) segment is
// scanned. Damage in a segment is a *log.CorruptionError naming its file,
// and the directory is then left as Open found it, apart from the repairs
// made before the damage was found.
func Open(dir string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	l := &Log{dir: dir, opts: opts, fs: opts.Log.FS}
	l.segBytes.Store(opts.SegmentBytes)
	l.segAge.Store(int64(opts.SegmentAge))
	if opts.MustExist {
		if err := l.mustExist(); err != nil {
			return nil, err
		}
	}
	if _, err := durable.MkdirAll(l.fs, dir); err != nil {
		return nil, fmt.Errorf("segment: open %s: %w", dir, err)
	}
	if err := l.recover(); err != nil {
		for _, s := range l.sealed {
			_ = s.file.Close()
		}
		if l.active != nil {
			_ = l.active.log.Close()
		}
		return nil, err
	}
	return l, nil
}

// mustExist reports, wrapping fs.ErrNotExist, a directory that is missing
// or holds no log (Options.MustExist).
func (l *Log) mustExist() error {
	if _, err := l.fs.Stat(l.dir); err != nil {
		return fmt.Errorf("segment: open %s: %w", l.dir, err)
	}
	d, err := l.list()
	if err != nil {
		return err
	}
	if len(d.segments) == 0 && !d.legacy && !d.start {
		return fmt.Errorf("segment: open %s: no segment, log.bin or log start: %w", l.dir, fs.ErrNotExist)
	}
	return nil
}

// dirListing is what a directory holds, by kind.
type dirListing struct {
	segments []uint64
	sidecars map[uint64]bool
	legacy   bool
	start    bool
}

func (l *Log) list() (dirListing, error) {
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return dirListing{}, fmt.Errorf("segment: open %s: %w", l.dir, err)
	}
	d := dirListing{sidecars: map[uint64]bool{}}
	for _, e := range entries {
		name := e.Name()
		if base, ok := ParseSegmentFileName(name); ok {
			d.segments = append(d.segments, base)
		} else if base, ok := ParseSidecarFileName(name); ok {
			d.sidecars[base] = true
		} else if name == LegacyFileName {
			d.legacy = true
		} else if name == StartFileName {
			d.start = true
		}
	}
	slices.Sort(d.segments)
	return d, nil
}

// recover builds the log's state from its directory.
func (l *Log) recover() error {
	d, err := l.list()
	if err != nil {
		return err
	}
	if d.legacy {
		if err := l.upgradeLegacy(d.segments); err != nil {
			return err
		}
		d.segments = []uint64{0}
	}
	if err := durable.RemoveTemp(l.fs, filepath.Join(l.dir, StartFileName)); err != nil {
		return fmt.Errorf("segment: open %s: %w", l.dir, err)
	}
	if d.start {
		if l.start, err = readStart(l.fs, filepath.Join(l.dir, StartFileName)); err != nil {
			return err
		}
	}
	// Orphan sidecars: left by a deletion that removed the segment file
	// and died before its sidecar.
	for base := range d.sidecars {
		if !slices.Contains(d.segments, base) {
			if err := l.removeSegmentFiles(base); err != nil {
				return err
			}
			l.opts.Logf("segment: %s: removed orphan sidecar %s", l.dir, SidecarFileName(base))
			delete(d.sidecars, base)
		}
	}
	// Segments wholly below the start: the next one begins at or below it
	// (an AdvanceStart or ResetTo that died while deleting).
	segs := d.segments
	for len(segs) > 1 && segs[1] <= l.start {
		if err := l.removeSegmentFiles(segs[0]); err != nil {
			return err
		}
		l.opts.Logf("segment: %s: deleted segment %s below the log start %d", l.dir, SegmentFileName(segs[0]), l.start)
		segs = segs[1:]
	}
	if len(segs) == 0 {
		segs = []uint64{l.start}
	}
	last := segs[len(segs)-1]
	if d.sidecars[last] {
		// A roll that wrote the sidecar and died before the next segment
		// existed: the segment is still the active one.
		if err := l.removeFile(l.sidecarPath(last)); err != nil {
			return err
		}
		l.opts.Logf("segment: %s: removed the sidecar of the active segment %s (a roll did not finish)", l.dir, SegmentFileName(last))
	}
	if l.active, err = l.openActive(last); err != nil {
		return err
	}
	if last < l.start && l.active.log.NextOffset() <= l.start {
		// Every record is below the start (a ResetTo that died before
		// creating its segment): the log is empty at the start.
		if err := l.active.log.Close(); err != nil {
			return fmt.Errorf("segment: open %s: %w", l.dir, err)
		}
		l.active = nil
		if l.active, err = l.openActive(l.start); err != nil {
			return err
		}
		if err := l.removeSegmentFiles(last); err != nil {
			return err
		}
		l.opts.Logf("segment: %s: deleted segment %s below the log start %d", l.dir, SegmentFileName(last), l.start)
		segs = []uint64{l.start}
	}
	for i, base := range segs[:len(segs)-1] {
		s, err := l.openSealed(base, segs[i+1], d.sidecars[base])
		if err != nil {
			return err
		}
		l.sealed = append(l.sealed, s)
	}
	return nil
}

// removeFile durably removes one file of the directory.
func (l *Log) removeFile(path string) error {
	if err := l.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("segment: remove %s: %w", path, err)
	}
	if err := durable.SyncDir(l.fs, l.dir); err != nil {
		return fmt.Errorf("segment: remove %s: %w", path, err)
	}
	return nil
}

// upgradeLegacy renames phase 1's log.bin to the first segment and fsyncs
// the directory. The rename is atomic, so a crash leaves one name or the
// other; a directory holding both is refused unchanged.
func (l *Log) upgradeLegacy(segments []uint64) error {
	legacy := filepath.Join(l.dir, LegacyFileName)
	if len(segments) > 0 {
		return &log.CorruptionError{Path: legacy, Reason: fmt.Sprintf("a legacy log file beside segment files (%s); refusing to guess which holds the log", SegmentFileName(segments[0]))}
	}
	first := l.segmentPath(0)
	if err := l.fs.Rename(legacy, first); err != nil {
		return fmt.Errorf("segment: upgrade %s: %w", legacy, err)
	}
	if err := durable.SyncDir(l.fs, l.dir); err != nil {
		return fmt.Errorf("segment: upgrade %s: %w", legacy, err)
	}
	l.opts.Logf("segment: %s: renamed legacy %s to %s", l.dir, LegacyFileName, SegmentFileName(0))
	return nil
}

// openSealed opens the sealed segment at base, whose successor starts at
// next, from its sidecar, rebuilding the sidecar when it is missing,
// damaged or disagrees with the segment.
func (l *Log) openSealed(base, next uint64, hasSidecar bool) (*sealedSegment, error) {
	path := l.segmentPath(base)
	f, err := l.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("segment: open %s: %w", path, err)
	}
	s, err := l.loadSealed(f, path, base, next, hasSidecar)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return s, nil
}

func (l *Log) loadSealed(f durable.File, path string, base, next uint64, hasSidecar bool) (*sealedSegment, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("segment: open %s: %w", path, err)
	}
	size := info.Size()
	scPath := l.sidecarPath(base)
	reason := "missing"
	var sc *sidecar
	if hasSidecar {
		sc, err = readSidecarHeader(l.fs, scPath)
		switch {
		case err != nil:
			reason, sc = err.Error(), nil
		case sc.base != base:
			reason, sc = fmt.Sprintf("%v: base %d, want %d", ErrSidecar, sc.base, base), nil
		case sc.size != size:
			reason, sc = fmt.Sprintf("%v: segment size %d, the file has %d", ErrSidecar, sc.size, size), nil
		}
	}
	if sc == nil {
		if sc, err = buildSidecar(path, f, size, base, l.opts.IndexInterval); err != nil {
			return nil, err
		}
		if sc.next() == next {
			if err := writeSidecar(l.fs, scPath, encodeSidecar(nil, sc)); err != nil {
				return nil, err
			}
			l.noteRebuilt(fmt.Sprintf("%s: %s", scPath, reason))
		}
	}
	if sc.next() != next {
		return nil, &log.CorruptionError{Path: path, Pos: size, Offset: sc.next(), OffsetKnown: true,
			Reason: fmt.Sprintf("sealed segment ends before offset %d but the next segment starts at %d", sc.next(), next)}
	}
	return newSealed(path, f, sc), nil
}

// readSidecarHeader reads and checks the header of the sidecar at path:
// its first sidecarHeadSize bytes, and a file length that fits the number
// of entries the header announces.
func readSidecarHeader(fsys durable.FS, path string) (*sidecar, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSidecar, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSidecar, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %w", ErrSidecar, durable.ErrNotRegular)
	}
	var b [sidecarHeadSize]byte
	if n, err := f.ReadAt(b[:], 0); n < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %d bytes, shorter than a header: %w", ErrSidecar, n, err)
	}
	sc, n, err := parseSidecarHeader(b[:])
	if err != nil {
		return nil, err
	}
	if want := sidecarSize(n); info.Size() != want {
		return nil, fmt.Errorf("%w: %d bytes, %d entries need %d", ErrSidecar, info.Size(), n, want)
	}
	return sc, nil
}

// readSidecar reads and parses the sidecar at path of a segment of size
// bytes.
func readSidecar(fsys durable.FS, path string, size int64) (*sidecar, error) {
	data, err := durable.ReadSmallFile(fsys, path, sidecarLimit(size))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSidecar, err)
	}
	return parseSidecar(data)
}
