package cluster

// Headroom below the process's file limit left for what is not a replica
// log: connections, the journal, cluster.meta and offset files in flight.
const (
	// MinFileHeadroom is the fewest descriptors DefaultMaxOpenLogs leaves
	// free when the limit allows it.
	MinFileHeadroom = 256
)

// DefaultMaxOpenLogs is the default Options.MaxOpenLogs for a process whose
// soft limit on open files is fileLimit: three quarters of it, leaving at
// least MinFileHeadroom descriptors free (half of them when the limit is
// below 2 × MinFileHeadroom). A fileLimit of 0 or less (unknown) means no
// limit (-1).
func DefaultMaxOpenLogs(fileLimit int) int {
	if fileLimit <= 0 {
		return -1
	}
	headroom := max(fileLimit/4, min(MinFileHeadroom, fileLimit/2))
	return max(fileLimit-headroom, 1)
}
