package cli

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/pystream/pystream/server/datalock"
)

// lockDataDirs walks up from path and takes every data-directory lock it
// finds (datalock.AcquireExisting), so that no server can start on the data
// while the caller works. It fails with a *datalock.LockedError when a
// running server holds one. release drops every lock taken.
func lockDataDirs(path string) (release func(), err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	var locks []*datalock.Lock
	release = func() {
		for _, l := range locks {
			// A tool's lock is a read-only descriptor: closing it cannot
			// lose data, and the flock goes with it either way.
			_ = l.Release()
		}
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		l, err := datalock.AcquireExisting(dir)
		switch {
		case err == nil:
			locks = append(locks, l)
		case errors.Is(err, fs.ErrNotExist):
			// No lock file here: not a data directory.
		default:
			release()
			return nil, err
		}
		if filepath.Dir(dir) == dir {
			return release, nil
		}
	}
}
