//go:build !linux

package cluster

// diskSpace is -1, -1: the file system's size is read on Linux only.
func diskSpace(string) (total, usable int64) { return -1, -1 }
