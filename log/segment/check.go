package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/pystream/pystream/log/durable"
)

// Read-only checks for tools that inspect a log without opening it
// (`pystream log verify`): they use the package's own parsers, so a tool
// and Open cannot disagree about a file.

// CheckSidecar judges the sidecar of the sealed segment at segmentPath,
// whose records end just before next: it must exist, be whole (its
// checksum), and agree with its segment's base, size and end. nil means
// Open would trust it; an error wrapping ErrSidecar says why Open would
// rebuild it. Nothing is changed.
func CheckSidecar(fsys durable.FS, segmentPath string, next uint64) error {
	if fsys == nil {
		fsys = durable.OS
	}
	base, ok := ParseSegmentFileName(filepath.Base(segmentPath))
	if !ok {
		return fmt.Errorf("segment: %s is not a segment file: %w", segmentPath, ErrSidecar)
	}
	info, err := fsys.Stat(segmentPath)
	if err != nil {
		return fmt.Errorf("segment: check sidecar of %s: %w", segmentPath, err)
	}
	scPath := filepath.Join(filepath.Dir(segmentPath), SidecarFileName(base))
	if _, err := fsys.Stat(scPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: missing", ErrSidecar)
	}
	sc, err := readSidecar(fsys, scPath, info.Size())
	switch {
	case err != nil:
		return err
	case sc.base != base:
		return fmt.Errorf("%w: base %d, want %d", ErrSidecar, sc.base, base)
	case sc.size != info.Size():
		return fmt.Errorf("%w: segment size %d, the file has %d", ErrSidecar, sc.size, info.Size())
	case sc.next() != next:
		return fmt.Errorf("%w: records end before %d, the segment's before %d", ErrSidecar, sc.next(), next)
	}
	return nil
}

// ReadLogStart reads the log start persisted in dir (AdvanceStart,
// ResetTo): ok is false when there is none, and the log then starts at its
// first segment. A damaged start file is a *log.CorruptionError naming it.
func ReadLogStart(fsys durable.FS, dir string) (start uint64, ok bool, err error) {
	if fsys == nil {
		fsys = durable.OS
	}
	path := filepath.Join(dir, StartFileName)
	if _, err := fsys.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	start, err = readStart(fsys, path)
	return start, err == nil, err
}
