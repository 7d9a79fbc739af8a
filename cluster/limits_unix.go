//go:build unix

package cluster

import (
	"math"
	"syscall"
)

// FileLimit is the process's soft limit on open files (RLIMIT_NOFILE), or
// 0 when it cannot be read.
func FileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	if rl.Cur > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(rl.Cur)
}
