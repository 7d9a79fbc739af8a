package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// errStopScan ends a scan early when a consumer of records stops pulling;
// it never leaves this package.
var errStopScan = errors.New("verify: stop scan")

// logResult is what scanning one log found: a segment directory, a
// directory still holding phase 1's log.bin, or a single file.
type logResult struct {
	// exists is false when there is no log at the path: no file, or a
	// directory with neither a segment file nor a log.bin.
	exists bool
	// dir is true for a log directory; legacy for one that holds only a
	// log.bin, not yet upgraded to segments.
	dir, legacy bool
	// segments counts the segment files of a directory.
	segments int
	// start is the log start: the first segment's base (0 for a log.bin);
	// end is the offset after the last whole record (start when there are
	// none).
	start, end uint64
	// records and bytes count the whole records and their frames.
	records uint64
	bytes   int64
	// notes are findings that are not damage, such as a sidecar the next
	// open rebuilds.
	notes []string
	// err is the *log.CorruptionError or I/O error that stopped the scan;
	// for a directory it names the segment file.
	err error
	// path is what was scanned: the log itself, or a temporary copy of it
	// with the writes its broker's commit journal holds for it made, as
	// replay will make them. journal says so when it is a copy.
	path, journal string
}

// LogDir is what the names in a log directory say about the log in it.
type LogDir struct {
	// Bases are the segment files' base offsets, ascending.
	Bases []uint64
	// Legacy is true when the directory holds phase 1's log.bin.
	Legacy bool
}

// ListLogDir reads the names in dir, which it never changes. A missing
// directory is an empty one.
func ListLogDir(dir string) (LogDir, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return LogDir{}, nil
	}
	if err != nil {
		return LogDir{}, err
	}
	var d LogDir
	for _, e := range entries {
		if base, ok := segment.ParseSegmentFileName(e.Name()); ok {
			d.Bases = append(d.Bases, base)
		} else if e.Name() == segment.LegacyFileName {
			d.Legacy = true
		}
	}
	slices.Sort(d.Bases)
	return d, nil
}

// IsLog reports whether the directory holds a log at all: a segment file
// or a log.bin.
func (d LogDir) IsLog() bool { return len(d.Bases) > 0 || d.Legacy }

// FileBase is the offset a single log file's frames start at, from its
// name: a segment file's base, a quarantine file's first offset, 0 for
// anything else (a log.bin).
func FileBase(path string) uint64 {
	name := filepath.Base(path)
	if base, ok := segment.ParseSegmentFileName(name); ok {
		return base
	}
	if from, _, _, ok := cluster.ParseQuarantineName(name); ok {
		return from
	}
	return 0
}

// scanLogFile reads the single log file at path to its end or its first
// damage, numbering its frames from the base its name gives. It never
// writes.
func scanLogFile(path string) logResult {
	base := FileBase(path)
	res := logResult{exists: true, start: base, end: base}
	res.err = log.ScanFileFrom(path, base, log.Options{}, func(pos int64, rec log.Record) error {
		res.records++
		res.end = rec.Offset + 1
		res.bytes = pos + int64(log.FrameSize(len(rec.Payload)))
		return nil
	})
	return res
}

// scanLogDir reads the segmented log in dir, every segment in order, to its
// end or its first damage (segment.ScanDir: damage names the segment file;
// a torn tail is possible only in the last segment; segments must follow on
// from each other). It never writes.
func scanLogDir(dir string) logResult {
	d, err := ListLogDir(dir)
	if err != nil {
		return logResult{exists: true, dir: true, err: err}
	}
	if !d.IsLog() {
		return logResult{dir: true}
	}
	res := logResult{exists: true, dir: true, legacy: d.Legacy && len(d.Bases) == 0, segments: len(d.Bases)}
	if len(d.Bases) > 0 {
		res.start = d.Bases[0]
	}
	if d.Legacy && len(d.Bases) > 0 {
		// segment.Open refuses to guess which of the two holds the log.
		res.err = &log.CorruptionError{Path: filepath.Join(dir, segment.LegacyFileName),
			Reason: fmt.Sprintf("a legacy %s beside segment files (%s); the server refuses to open the log", segment.LegacyFileName, segment.SegmentFileName(d.Bases[0]))}
		return res
	}
	if start, ok, err := segment.ReadLogStart(nil, dir); err != nil {
		res.err = err
		return res
	} else if ok && start > res.start {
		res.start = start // records below it are kept but never served
	}
	res.end = res.start
	// sealed holds each sealed segment as the scan left it: whole.
	var sealed []segment.SegmentInfo
	res.err = segment.ScanDir(dir, log.Options{}, func(seg segment.SegmentInfo, _ int64, rec log.Record) error {
		if n := len(sealed); seg.Sealed && (n == 0 || sealed[n-1].Base != seg.Base) {
			sealed = append(sealed, seg)
		} else if seg.Sealed {
			sealed[n-1] = seg
		}
		if rec.Offset < res.start {
			return nil // checked for damage, not counted: below the log start
		}
		res.records++
		res.end = rec.Offset + 1
		res.bytes += int64(log.FrameSize(len(rec.Payload)))
		return nil
	})
	if res.err == nil {
		for _, seg := range sealed {
			if err := checkSidecar(seg); err != nil {
				res.notes = append(res.notes, fmt.Sprintf("sidecar of %s: %v; the next open rebuilds it", filepath.Base(seg.Path), err))
			}
		}
	}
	return res
}

// checkSidecar judges the sidecar of one sealed, whole segment: whole,
// checksummed and in agreement with its segment. A sidecar that is not is
// rebuilt by segment.Open, so it is a note, not damage. The sidecar format
// is the segment package's own, so the check is its too
// (segment.CheckSidecar), as the modules' parsers are for metadata files.
func checkSidecar(seg segment.SegmentInfo) error {
	return segment.CheckSidecar(nil, seg.Path, seg.Next)
}

// records yields the records of the log r describes at path (a directory
// or a single file). A scan error, if any, is stored in *errp once the
// sequence ends.
func records(path string, dir bool, errp *error) iter.Seq[log.Record] {
	return func(yield func(log.Record) bool) {
		visit := func(r log.Record) error {
			if !yield(r) {
				return errStopScan
			}
			return nil
		}
		var err error
		if dir {
			err = segment.ScanDir(path, log.Options{}, func(_ segment.SegmentInfo, _ int64, r log.Record) error { return visit(r) })
		} else {
			err = log.ScanFileFrom(path, FileBase(path), log.Options{}, func(_ int64, r log.Record) error { return visit(r) })
		}
		if err != nil && !errors.Is(err, errStopScan) {
			*errp = err
		}
	}
}
