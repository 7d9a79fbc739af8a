package wal

// SetZeroAhead makes generations be filled with zeros n bytes at a time
// until the returned restore is called: crash tests, whose CrashFS reads
// a whole file back at each fsync, keep their generation files small.
func SetZeroAhead(n int) (restore func()) {
	old := zeroAhead
	zeroAhead = n
	return func() { zeroAhead = old }
}
