package durable

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// SyncGroup makes the appends of many files durable together: a file
// system that can sync everything written to it at once (WholeSyncer:
// syncfs(2) on Linux) pays one sync for every file written since the last
// one, instead of one fdatasync per file. A broker whose writes are
// spread over a thousand partitions thus pays about as many syncs as one
// whose writes go to three
// (docs/design.md § One sync for many partitions).
//
// Sync is group commit over syncs: a caller that finds no sync running
// starts one; callers that arrive while one runs wait for it to end and
// share the next, since the running one may have started before their
// write. Nothing waits for a timer. A caller returns only after a sync
// that began after its call has succeeded, so what it wrote before the
// call is durable. An error fails every caller of that sync; the next
// sync is tried afresh, as a file's next fsync is.
//
// On a file system that cannot sync as a whole, Sync is f.Sync().
//
// The cost: a sync of the whole file system also writes back what other
// programs wrote to it; on a shared disk the data directory is better on
// a file system of its own.
type SyncGroup struct {
	fsys  FS
	dir   File // held open: write-back errors are reported through it once
	whole WholeSyncer

	mu   sync.Mutex
	cond *sync.Cond
	// running counts the syncs under way, at most maxRunning; pending is
	// the next sync, not started yet, that callers join.
	running int
	pending *round
}

// maxRunning is how many syncs of the file system a group runs at once:
// one, the classic group commit, so that every caller that arrives while
// a sync runs shares the next. Measured with 64 kgo producers spread over
// 1,000 partitions, two or four at once spread the records thin (1.1 per
// sync, against 9.1 with one) and wrote a third as many a second: each
// record found a free slot and paid a sync of its own.
const maxRunning = 1

// round is one sync of the file system and the callers it answers.
type round struct {
	done chan struct{}
	err  error
}

// NewSyncGroup returns a group over the file system of fsys that holds
// dir. It syncs that file system once to learn whether it can: when it
// cannot, every Sync is the file's own.
func NewSyncGroup(fsys FS, dir string) (*SyncGroup, error) {
	g := &SyncGroup{fsys: fsys}
	g.cond = sync.NewCond(&g.mu)
	w, ok := fsys.(WholeSyncer)
	if !ok {
		return g, nil
	}
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("durable: sync group over %s: %w", dir, err)
	}
	if err := w.SyncFS(d); err != nil {
		_ = d.Close()
		if errors.Is(err, errors.ErrUnsupported) {
			return g, nil
		}
		return nil, fmt.Errorf("durable: sync group over %s: %w", dir, err)
	}
	g.dir, g.whole = d, w
	return g, nil
}

// Whole reports whether the group syncs the file system as a whole; when
// false, each Sync is the file's own.
func (g *SyncGroup) Whole() bool { return g.whole != nil }

// Sync returns once what was written to f before the call is durable:
// after a sync of the whole file system that started after the call, or
// f.Sync() where the file system cannot sync as a whole.
func (g *SyncGroup) Sync(f File) error {
	if g.whole == nil {
		return f.Sync()
	}
	g.mu.Lock()
	r := g.pending
	if r != nil {
		// A sync not started yet: it will start after this call.
		g.mu.Unlock()
		<-r.done
		return g.outcome(f, r)
	}
	r = &round{done: make(chan struct{})}
	g.pending = r
	for g.running >= maxRunning {
		g.cond.Wait() // others join r meanwhile
	}
	g.pending = nil // r starts now: later callers need the next one
	g.running++
	g.mu.Unlock()
	r.err = g.whole.SyncFS(g.dir)
	g.mu.Lock()
	g.running--
	g.cond.Broadcast()
	g.mu.Unlock()
	close(r.done)
	return g.outcome(f, r)
}

// outcome is what Sync of f returns once r is done.
func (g *SyncGroup) outcome(f File, r *round) error {
	if r.err != nil {
		return fmt.Errorf("durable: sync of %s with its file system: %w", f.Name(), r.err)
	}
	return nil
}

// Close releases the group's directory; Sync must not be called after.
func (g *SyncGroup) Close() error {
	if g.dir == nil {
		return nil
	}
	return g.dir.Close()
}
