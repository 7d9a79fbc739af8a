package durable

import "errors"

// Errors ReadSmallFile returns; test with errors.Is.
var (
	// ErrNotRegular means the path names something other than a regular
	// file: a directory, a device, a socket.
	ErrNotRegular = errors.New("durable: not a regular file")
	// ErrTooLarge means the file is larger than its format allows.
	ErrTooLarge = errors.New("durable: file larger than its format allows")
)
