package log

// QueuedAppends reports how many append calls are waiting for a batch, so
// that tests can line up a group-committed batch without sleeping.
func QueuedAppends(l *Log) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}
