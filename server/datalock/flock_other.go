//go:build !unix

package datalock

import (
	"errors"
	"os"
)

// tryFlock cannot lock without flock(2), so it fails rather than let a
// caller believe it holds the data directory.
func tryFlock(f *os.File) (held bool, err error) {
	return false, errors.ErrUnsupported
}
