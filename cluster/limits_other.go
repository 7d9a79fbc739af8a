//go:build !unix

package cluster

// FileLimit is the process's soft limit on open files, or 0 when it cannot
// be read, as on this platform.
func FileLimit() int { return 0 }
