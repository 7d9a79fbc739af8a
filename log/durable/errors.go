package durable

import (
	"errors"
	"syscall"
)

// Errors ReadSmallFile returns; test with errors.Is.
var (
	// ErrNotRegular means the path names something other than a regular
	// file: a directory, a device, a socket.
	ErrNotRegular = errors.New("durable: not a regular file")
	// ErrTooLarge means the file is larger than its format allows.
	ErrTooLarge = errors.New("durable: file larger than its format allows")
)

// NoSpace reports whether err comes down to a full file system: ENOSPC (no
// space left on device) or EDQUOT (disk quota exceeded) anywhere in its
// chain. Such a failure is sticky like any other write failure — the file
// that failed is in doubt until it is reopened — but it says where the
// fault lies: the disk, not the program nor the request. Callers answer it
// as "insufficient storage" and reopen once space returns.
func NoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
