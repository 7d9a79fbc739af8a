//go:build unix

package datalock

import (
	"errors"
	"os"
	"syscall"
)

// tryFlock takes a non-blocking exclusive flock(2) on f. It returns
// held=true when another open file description holds it.
func tryFlock(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
