package segment

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// The log start file, log.start, is one small JSON object written with
// durable.WriteFile (temp file, fsync, rename, directory fsync):
//
//	{"version":1,"log_start":1234}
//
// It exists only once the start has been raised above the first segment's
// base; LogStart is the larger of the two.
const (
	startVersion   = 1
	startFileLimit = 256
)

func encodeStart(start uint64) []byte {
	return fmt.Appendf(nil, "{\"version\":%d,\"log_start\":%d}\n", startVersion, start)
}

// readStart reads the start file; anything but a file written by
// encodeStart is a *log.CorruptionError naming it.
func readStart(fsys durable.FS, path string) (uint64, error) {
	data, err := durable.ReadSmallFile(fsys, path, startFileLimit)
	if err != nil {
		return 0, fmt.Errorf("segment: read %s: %w", path, err)
	}
	bad := func(reason string, cause error) error {
		return &log.CorruptionError{Path: path, Reason: reason, Err: cause}
	}
	fields, err := durable.ObjectFields(data)
	if err != nil {
		return 0, bad("not a log start file", err)
	}
	if name, ok := durable.UnknownField(fields, "version", "log_start"); ok {
		return 0, bad(fmt.Sprintf("unknown field %q", name), nil)
	}
	var version int
	if raw, ok := fields["version"]; !ok || json.Unmarshal(raw, &version) != nil || version != startVersion {
		return 0, bad(fmt.Sprintf("version %s, want %d", fields["version"], startVersion), nil)
	}
	raw, ok := fields["log_start"]
	if !ok || !durable.IsInteger(raw) {
		return 0, bad("log_start is not a whole number", nil)
	}
	start, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, bad("log_start out of range", err)
	}
	return start, nil
}

// persistStartLocked durably writes start to the start file. l.adminMu
// must be held.
func (l *Log) persistStartLocked(start uint64) error {
	if err := durable.WriteFile(l.fs, filepath.Join(l.dir, StartFileName), encodeStart(start)); err != nil {
		return fmt.Errorf("segment: persist log start %d: %w", start, err)
	}
	return nil
}

// AdvanceStart raises the log start to start (it never lowers it; start
// past NextOffset is an error wrapping log.ErrInvalidArgument) and deletes,
// oldest first, every sealed segment whose records all lie below it, never
// the active one. It returns the segments it deleted. The start is
// persisted first, and only when it falls inside a kept segment (above the
// first kept segment's base); each deletion is followed by a directory
// fsync, so a crash leaves a contiguous run of segments and a start at
// least as high as before. A failed write or deletion is sticky.
func (l *Log) AdvanceStart(start uint64) ([]SegmentInfo, error) {
	l.adminMu.Lock()
	defer l.adminMu.Unlock()
	l.rollMu.RLock()
	err := l.writableLocked()
	l.rollMu.RUnlock()
	if err != nil {
		return nil, err
	}

	l.segMu.RLock()
	cur, next := l.logStartLocked(), l.active.log.NextOffset()
	drop := 0
	for drop < len(l.sealed) && l.sealed[drop].next <= start {
		drop++
	}
	firstKept := l.active.base
	if drop < len(l.sealed) {
		firstKept = l.sealed[drop].base
	}
	l.segMu.RUnlock()
	if start > next {
		return nil, fmt.Errorf("segment: advance start of %s to %d past the end %d: %w", l.dir, start, next, log.ErrInvalidArgument)
	}
	if start <= cur {
		return nil, nil
	}
	if start > firstKept {
		if err := l.persistStartLocked(start); err != nil {
			return nil, l.failLocked(err)
		}
	}
	// Rolls may add sealed segments meanwhile, never remove them: the
	// first drop are still the ones to go.
	l.segMu.Lock()
	gone := l.sealed[:drop:drop]
	l.sealed = append([]*sealedSegment(nil), l.sealed[drop:]...)
	l.start = max(l.start, start)
	l.segMu.Unlock()

	var deleted []SegmentInfo
	for _, s := range gone {
		_ = s.file.Close()
		if err := l.removeSegmentFiles(s.base); err != nil {
			return deleted, l.failLocked(err)
		}
		deleted = append(deleted, s.info())
	}
	return deleted, nil
}

// failLocked makes err sticky and returns it. l.adminMu must be held.
func (l *Log) failLocked(err error) error {
	l.rollMu.Lock()
	defer l.rollMu.Unlock()
	if l.failed == nil {
		l.failed = err
	}
	return err
}

// ResetTo empties the log at start, for a follower whose NextOffset is
// below the leader's log start: afterwards LogStart and NextOffset are both
// start and the only segment is an empty one named after start. A start
// below NextOffset is an error wrapping log.ErrInvalidArgument (use
// AdvanceStart and Truncate). The steps, each durable before the next:
// persist the start, create the new segment, delete the old segments
// oldest first. A crash anywhere leaves either the old log or, since every
// old segment lies below the persisted start, an empty log at start (doc.go
// § Recovery).
func (l *Log) ResetTo(start uint64) error {
	unlock, err := l.lockExclusive()
	if err != nil {
		return err
	}
	defer unlock()
	a := l.active
	if next := a.log.NextOffset(); start < next {
		return fmt.Errorf("segment: reset %s to %d below the end %d: %w", l.dir, start, next, log.ErrInvalidArgument)
	}
	fail := func(err error) error {
		l.failed = err
		return err
	}
	if err := l.persistStartLocked(start); err != nil {
		return fail(err)
	}
	old := l.sealed
	if a.base != start {
		na, err := l.openActive(start)
		if err != nil {
			return fail(err)
		}
		if err := a.log.Close(); err != nil {
			_ = na.log.Close()
			return fail(fmt.Errorf("segment: reset %s: %w", l.dir, err))
		}
		old = append(old, &sealedSegment{base: a.base})
		l.active = na
	}
	l.sealed, l.start = nil, start
	for _, s := range old {
		if s.file != nil {
			_ = s.file.Close()
		}
		if err := l.removeSegmentFiles(s.base); err != nil {
			return fail(err)
		}
	}
	return nil
}
