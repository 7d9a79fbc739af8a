package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// lockFileName is the lock file a server keeps, flocked, in its data
// directory (PYSTREAM_DATA_DIR) while it runs. It holds the server's pid.
const lockFileName = ".lock"

// lockDataDirs walks up from path and takes every data-directory lock it
// finds, so that no server can start on the data while the caller works. It
// fails with a *LockedError when a running server holds one. release drops
// every lock taken.
func lockDataDirs(path string) (release func(), err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	var releases []func()
	release = func() {
		for _, r := range releases {
			r()
		}
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		lock := filepath.Join(dir, lockFileName)
		if _, serr := os.Stat(lock); serr == nil {
			rel, held, lerr := tryLock(lock)
			switch {
			case lerr != nil:
				release()
				return nil, fmt.Errorf("check lock %s: %w", lock, lerr)
			case held:
				release()
				return nil, &LockedError{Lock: lock, PID: readPID(lock)}
			}
			releases = append(releases, rel)
		} else if !errors.Is(serr, fs.ErrNotExist) {
			release()
			return nil, fmt.Errorf("check lock %s: %w", lock, serr)
		}
		if filepath.Dir(dir) == dir {
			return release, nil
		}
	}
}

// readPID returns the pid written in a lock file, or "" if there is none.
func readPID(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	pid := strings.TrimSpace(string(data))
	if len(pid) > 20 {
		return ""
	}
	return pid
}
