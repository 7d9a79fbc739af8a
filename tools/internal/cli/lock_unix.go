//go:build unix

package cli

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes a non-blocking exclusive flock(2) on the lock file at path.
// It returns held=true, and no release, when another process holds it.
func tryLock(path string) (release func(), held bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return func() {
		// Closing the descriptor releases the lock.
		f.Close()
	}, false, nil
}
