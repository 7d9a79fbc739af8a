package server

import "github.com/pystream/pystream/cluster"

// FileLimit is the process's limit on open files (RLIMIT_NOFILE) as the
// start-up line reports it: each replica log holds one descriptor, so it
// bounds the partitions the server can serve (PYSTREAM_MAX_OPEN_LOGS).
type FileLimit struct {
	// Soft is the limit in force; Hard the most it may be raised to.
	// Both are 0 when the platform does not say.
	Soft, Hard int
	// Raised is true when RaiseFileLimit raised Soft.
	Raised bool
}

// maxOpenLogs is the replica-log cap of cfg over a process whose soft file
// limit is soft: the configured value, never above what the file limit
// allows (the derived default), which is also the value for 0.
func maxOpenLogs(cfg Config, lim FileLimit) int {
	derived := cluster.DefaultMaxOpenLogs(lim.Soft)
	if cfg.MaxOpenLogs > 0 && (lim.Soft <= 0 || int(cfg.MaxOpenLogs) < derived) {
		return int(cfg.MaxOpenLogs)
	}
	// A configured cap above what the file limit allows would let a
	// creation fail on "too many open files" instead of a clear 409: the
	// file limit wins (both are in the start-up line).
	return derived
}
