package datalock

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ErrLocked is matched by every *LockedError: another process holds the
// data directory's lock.
var ErrLocked = errors.New("datalock: data directory is in use by another process")

// LockedError reports that another process, usually a running server,
// holds the lock on a data directory.
type LockedError struct {
	// Path is the lock file.
	Path string
	// PID is the holder's process id as the lock file says, or 0 when the
	// file does not say.
	PID int
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("pid %d", e.PID)
	}
	return fmt.Sprintf("datalock: data directory %s is in use by %s (it holds %s)", filepath.Dir(e.Path), who, e.Path)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }
