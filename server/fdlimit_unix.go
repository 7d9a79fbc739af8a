//go:build unix

package server

import (
	"fmt"
	"math"
	"syscall"
)

// RaiseFileLimit raises the soft limit on open files to the hard one and
// returns both. (The Go runtime raises it too, at start, on most
// platforms; doing it here makes the start-up line's numbers the ones in
// force, whatever the runtime did.)
func RaiseFileLimit() (FileLimit, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return FileLimit{}, fmt.Errorf("server: read the open-file limit: %w", err)
	}
	lim := FileLimit{Soft: clampInt(rl.Cur), Hard: clampInt(rl.Max)}
	if rl.Cur >= rl.Max {
		return lim, nil
	}
	raised := rl
	raised.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		return lim, fmt.Errorf("server: raise the open-file limit from %d to %d: %w", lim.Soft, lim.Hard, err)
	}
	lim.Soft, lim.Raised = lim.Hard, true
	return lim, nil
}

func clampInt(v uint64) int {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}
