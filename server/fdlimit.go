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
// limit is soft: the configured value, or the derived default for 0.
func maxOpenLogs(cfg Config, lim FileLimit) int {
	if cfg.MaxOpenLogs > 0 {
		return int(cfg.MaxOpenLogs)
	}
	return cluster.DefaultMaxOpenLogs(lim.Soft)
}
