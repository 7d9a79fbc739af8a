package segment

import (
	"fmt"

	"github.com/pystream/pystream/log"
)

// Truncate durably drops every record with offset >= end, across segments:
// the segments that begin above end are deleted newest first (each
// deletion followed by a directory fsync), the segment holding end becomes
// the active one (its sidecar, if it was sealed, is removed first) and is
// cut at end. A segment that begins exactly at end stays, empty, as the
// active one. It waits for appends in flight and holds off appends and
// reads while it works. An end below LogStart or past NextOffset is an
// error wrapping log.ErrInvalidArgument and changes nothing; an end equal
// to NextOffset changes nothing. A crash part-way leaves a log that holds
// a prefix of the old one at least end records long; a failure is sticky.
func (l *Log) Truncate(end uint64) error {
	unlock, err := l.lockExclusive()
	if err != nil {
		return err
	}
	defer unlock()
	next, ls := l.active.log.NextOffset(), l.logStartLocked()
	if end < ls || end > next {
		return fmt.Errorf("segment: truncate %s to offset %d outside [%d, %d]: %w", l.dir, end, ls, next, log.ErrInvalidArgument)
	}
	if end == next {
		return nil
	}
	fail := func(err error) error {
		l.failed = err
		return err
	}
	if end >= l.active.base {
		if err := l.active.log.Truncate(end); err != nil {
			return fail(err)
		}
		return l.refreshActiveLocked()
	}
	// end lies in a sealed segment: the active one and every sealed one
	// beginning above end go, newest first.
	if err := l.active.log.Close(); err != nil {
		return fail(fmt.Errorf("segment: truncate %s: %w", l.dir, err))
	}
	if err := l.removeSegmentFiles(l.active.base); err != nil {
		return fail(err)
	}
	for len(l.sealed) > 0 && l.sealed[len(l.sealed)-1].base > end {
		s := l.sealed[len(l.sealed)-1]
		l.sealed = l.sealed[:len(l.sealed)-1]
		_ = s.file.Close()
		if err := l.removeSegmentFiles(s.base); err != nil {
			return fail(err)
		}
	}
	s := l.sealed[len(l.sealed)-1] // base <= end: end >= LogStart >= the first base
	l.sealed = l.sealed[:len(l.sealed)-1]
	_ = s.file.Close()
	if err := l.removeFile(l.sidecarPath(s.base)); err != nil {
		return fail(err)
	}
	a, err := l.openActive(s.base)
	if err != nil {
		return fail(err)
	}
	l.active = a
	if err := a.log.Truncate(end); err != nil {
		return fail(err)
	}
	return l.refreshActiveLocked()
}

// refreshActiveLocked rebuilds what the active segment's wrapper knows after
// its log was cut. l.rollMu and l.segMu must be held exclusively.
func (l *Log) refreshActiveLocked() error {
	a, err := newActive(l.active.path, l.active.log)
	if err != nil {
		l.failed = err
		return err
	}
	l.active = a
	return nil
}

// lockExclusive takes every lock of the log, in order (adminMu, rollMu,
// segMu), for an operation that changes which segments there are while no
// append, roll or read runs: Truncate and ResetTo. It refuses, with every
// lock released, a log that is closed or failed.
func (l *Log) lockExclusive() (unlock func(), err error) {
	l.adminMu.Lock()
	l.rollMu.Lock()
	if err := l.writableLocked(); err != nil {
		l.rollMu.Unlock()
		l.adminMu.Unlock()
		return nil, err
	}
	l.segMu.Lock()
	return func() {
		l.segMu.Unlock()
		l.rollMu.Unlock()
		l.adminMu.Unlock()
	}, nil
}
