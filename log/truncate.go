package log

import "fmt"

// Truncate durably drops every record with offset >= end: the file is cut
// and fsync-ed before Truncate returns, and later appends continue at end.
// It waits for appends in flight and holds off new ones and readers while
// it works. An end past NextOffset is an error wrapping ErrInvalidArgument;
// an end equal to it changes nothing, and one below the base offset
// (Options.BaseOffset) is an error wrapping ErrInvalidArgument. A failed cut or fsync is sticky, like
// a failed append.
func (l *Log) Truncate(end uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.writing {
		l.idle.Wait()
	}
	if err := l.writableLocked(); err != nil {
		return fmt.Errorf("log: truncate %s: %w", l.path, err)
	}
	if end > l.next {
		return fmt.Errorf("log: truncate %s to offset %d past the end %d: %w", l.path, end, l.next, ErrInvalidArgument)
	}
	if end < l.base {
		return fmt.Errorf("log: truncate %s to offset %d below the base offset %d: %w", l.path, end, l.base, ErrInvalidArgument)
	}
	if end == l.next {
		return nil
	}
	l.fileMu.Lock()
	defer l.fileMu.Unlock()
	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	cut := l.positions[end-l.base]
	err := l.file.Truncate(cut)
	if err == nil {
		err = l.file.Sync()
	}
	if err != nil {
		l.failed = err
		return fmt.Errorf("log: truncate %s to offset %d (byte %d): %w", l.path, end, cut, err)
	}
	l.positions = l.positions[: end-l.base : end-l.base]
	l.end, l.writeEnd, l.next = cut, cut, end
	return nil
}
