package wal

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/pystream/pystream/log/durable"
)

// file is a journaled file: its writes are staged as journal entries, and
// its Sync commits them to the journal instead of fsyncing the file.
type file struct {
	durable.File
	j   *FS
	rel string

	mu sync.Mutex
	// staged are the entries of the writes since the last Sync, and
	// stagedEnd the end of the furthest of them.
	staged    []byte
	stagedEnd int64
	// cut is set by Truncate: the next Sync fsyncs the file itself, since
	// a journal replays writes, not cuts.
	cut bool

	// own guards closed against a checkpoint's fsync.
	own    sync.Mutex
	closed bool
}

// WriteAt writes to the file and stages the write for the next Sync.
func (f *file) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	if n > 0 {
		f.mu.Lock()
		f.staged = appendEntry(f.staged, f.rel, off, p[:n])
		f.stagedEnd = max(f.stagedEnd, off+int64(n))
		f.mu.Unlock()
	}
	return n, err
}

// Sync makes what was written to the file before the call durable: by
// the journal when it was written through WriteAt since the last Sync,
// else (nothing staged, or a cut since) by an fsync of the file itself.
func (f *file) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut || len(f.staged) == 0 {
		f.staged, f.stagedEnd, f.cut = f.staged[:0], 0, false
		return f.j.ownSync(f)
	}
	err := f.j.commit(f, f.staged, f.stagedEnd)
	if cap(f.staged) > maxStaged {
		f.staged = nil
	} else {
		f.staged = f.staged[:0]
	}
	f.stagedEnd = 0
	return err
}

// maxStaged bounds the staging buffer a file keeps between syncs.
const maxStaged = 1 << 20

// Truncate cuts the file, after a checkpoint if the journal holds writes
// to it past the cut: a replay would write them back. Writes the journal
// holds below the cut stay: a replay writes them where they were (a log
// cutting back a failed write cuts at the end of what it acknowledged, so
// a full disk, on which a checkpoint cannot make its next generation,
// does not stop it). The writes staged and not yet synced are dropped:
// the next Sync fsyncs the file itself.
func (f *file) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.staged, f.stagedEnd, f.cut = f.staged[:0], 0, true
	f.j.mu.Lock()
	h, ok := f.j.newest[f.rel]
	f.j.mu.Unlock()
	if ok && h.end > size {
		if err := f.j.Checkpoint(); err != nil {
			return fmt.Errorf("wal: truncate %s: %w", f.Name(), err)
		}
	}
	return f.File.Truncate(size)
}

// syncOwn fsyncs the file for a checkpoint; once it is closed, through a
// descriptor opened for it, as a log that opens an existing file fsyncs
// it before serving it.
func (f *file) syncOwn() error {
	f.own.Lock()
	defer f.own.Unlock()
	if !f.closed {
		return f.File.Sync()
	}
	d, err := f.j.base.OpenFile(f.Name(), os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Close closes the file. What the journal holds of it is fsync-ed by the
// next checkpoint, or the journal's Close, and the journal keeps it until
// then: a file closed on a full disk, whose own fsync would fail, breaks
// nothing.
func (f *file) Close() error {
	f.own.Lock()
	defer f.own.Unlock()
	f.closed = true
	return f.File.Close()
}

// ownSync fsyncs f itself. When that fails while the journal holds writes
// to f, the journal breaks: the failed fsync may have dropped pages it
// never reports again, so a later checkpoint's fsync of f could succeed
// and remove the only durable copy of them. Broken, the journal keeps
// every generation for the next Open to replay.
func (j *FS) ownSync(f *file) error {
	err := f.File.Sync()
	if err == nil {
		return nil
	}
	j.mu.Lock()
	_, held := j.newest[f.rel]
	j.mu.Unlock()
	if held {
		j.breakWith(fmt.Errorf("wal: fsync %s, which the journal holds writes to: %w", f.Name(), err))
	}
	return err
}
