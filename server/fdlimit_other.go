//go:build !unix

package server

// RaiseFileLimit does nothing on this platform, which has no RLIMIT_NOFILE.
func RaiseFileLimit() (FileLimit, error) { return FileLimit{}, nil }
