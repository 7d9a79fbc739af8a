package segment

import (
	"errors"
	"fmt"
	"os"
)

// Rolling. An appender that finds the active segment full (or old) lets go
// of rollMu and calls roll, which takes rollMu exclusively: that waits for
// every append in flight, and holds off new ones, so the segment's file is
// final. Sealing then
//
//  1. reads the segment once and builds its sidecar (walk.go),
//  2. writes the sidecar and fsyncs it and the directory,
//  3. creates the next segment, named after NextOffset, and fsyncs the
//     directory (log.OpenWithOptions),
//  4. swaps the segment list under segMu and closes the old log.Log.
//
// A crash before 2 completes leaves the segment active (a sidecar on the
// last segment is dropped by Open); a crash after 3 leaves it sealed with a
// durable sidecar. Any failure is sticky: the log refuses writes until it
// is reopened, and Open finishes or undoes the roll.

// roll seals a, if it is still the active segment and still must roll for
// an append of need bytes.
func (l *Log) roll(a *activeSegment, need int64) error {
	l.rollMu.Lock()
	defer l.rollMu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if l.active != a || !l.mustRollLocked(a, need) {
		return nil // another appender rolled, or the options changed
	}
	if err := a.log.Failed(); err != nil {
		return fmt.Errorf("segment: roll %s: %w", a.path, err)
	}
	if err := l.sealLocked(); err != nil {
		l.failed = err
		return fmt.Errorf("segment: %w: %w", errFailedRoll, err)
	}
	return nil
}

var errFailedRoll = errors.New("roll failed")

// Roll seals the active segment now, if it holds any record, and starts
// the next one; rolled says whether it did. Retention rolls a segment whose
// records have all expired (ExpiredActive) so that it can be deleted. A
// failure is sticky, as a roll on append is.
func (l *Log) Roll() (rolled bool, err error) {
	l.rollMu.Lock()
	defer l.rollMu.Unlock()
	if err := l.writableLocked(); err != nil {
		return false, err
	}
	a := l.active
	if a.log.NextOffset() == a.base {
		return false, nil
	}
	if err := a.log.Failed(); err != nil {
		return false, fmt.Errorf("segment: roll %s: %w", a.path, err)
	}
	if err := l.sealLocked(); err != nil {
		l.failed = err
		return false, fmt.Errorf("segment: %w: %w", errFailedRoll, err)
	}
	return true, nil
}

// sealLocked seals the active segment and opens the next one. l.rollMu
// must be held exclusively.
func (l *Log) sealLocked() error {
	a := l.active
	next, size := a.log.NextOffset(), a.log.Size()
	f, err := l.fs.OpenFile(a.path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("segment: seal %s: %w", a.path, err)
	}
	sc, err := buildSidecar(a.path, f, size, a.base, l.opts.IndexInterval)
	if err == nil && sc.next() != next {
		err = fmt.Errorf("segment: seal %s: %d records on disk, the log counts %d", a.path, sc.count, next-a.base)
	}
	if err == nil {
		err = writeSidecar(l.fs, l.sidecarPath(a.base), encodeSidecar(nil, sc))
	}
	var nextActive *activeSegment
	if err == nil {
		nextActive, err = l.openActive(next)
	}
	if err != nil {
		return errors.Join(err, f.Close())
	}
	l.segMu.Lock()
	l.sealed = append(l.sealed, newSealed(a.path, f, sc))
	l.active = nextActive
	l.segMu.Unlock()
	// Every record of the old segment is durable and it is read through f
	// from now on; a failing close of its writer loses nothing.
	_ = a.log.Close()
	return nil
}
