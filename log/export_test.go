package log

// QueuedAppends reports how many append calls are waiting for a batch, so
// that tests can line up a group-committed batch without sleeping.
func QueuedAppends(l *Log) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

// IndexCap reports the capacity of the in-memory offset index, in entries.
func IndexCap(l *Log) int {
	l.idxMu.RLock()
	defer l.idxMu.RUnlock()
	return cap(l.positions)
}
