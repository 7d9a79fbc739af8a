//go:build linux

package cluster

import "golang.org/x/sys/unix"

// diskSpace is the size of the file system that holds dir and the bytes
// an unprivileged writer can still use of it; -1, -1 when statfs fails.
func diskSpace(dir string) (total, usable int64) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1, -1
	}
	bsize := int64(st.Bsize) //nolint:unconvert // an int32 on some platforms
	return int64(st.Blocks) * bsize, int64(st.Bavail) * bsize
}
