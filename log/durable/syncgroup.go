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
// call is durable. An error fails every caller of that sync and breaks
// the group: every later Sync is the file's own (see Sync).
//
// On a file system that cannot sync as a whole, Sync is f.Sync().
//
// The cost: a sync of the whole file system also writes back what other
// programs wrote to it; on a shared disk the data directory is better on
// a file system of its own.
type SyncGroup struct {
	dir   File // held open: write-back errors are reported through it once
	whole WholeSyncer
	// dev is the device of dir's file system, when known: a file on
	// another (a mount inside the directory) is synced on its own.
	dev      uint64
	devKnown bool
	// Logf, if set, is told when the group stops sharing syncs.
	Logf func(format string, args ...any)

	mu   sync.Mutex
	cond *sync.Cond
	// syncing is set while a sync of the file system is under way: one at
	// a time, the classic group commit, so that every caller that arrives
	// meanwhile shares the next. (Measured with 64 kgo producers spread
	// over 1,000 partitions, two or four at once spread the records thin,
	// 1.1 a sync against 9.1 with one, and wrote a third as many a second:
	// each record found a free slot and paid a sync of its own.) pending
	// is the next sync, not started yet, that callers join.
	syncing bool
	pending *round
	// broken is the first error of a sync of the file system: from then
	// on every Sync is the file's own (see Sync). closed is set by Close.
	broken error
	closed bool
	// covered says, by file name, whether a file is on dir's file system.
	covered map[string]bool
}

// round is one sync of the file system and the callers it answers.
type round struct {
	done chan struct{}
	err  error
	// own says the round did not sync: each of its callers syncs its own
	// file (the group broke or closed while the round waited).
	own bool
}

// NewSyncGroup returns a group over the file system of fsys that holds
// dir. It asks fsys whether a sync of that file system vouches for its
// files (WholeSyncer.CanSyncFS) and syncs it once: when it cannot (an
// error wrapping errors.ErrUnsupported), every Sync is the file's own;
// when that first sync fails otherwise (a write-back error), NewSyncGroup
// fails with it, and so does the cluster that opens the group.
func NewSyncGroup(fsys FS, dir string) (*SyncGroup, error) {
	g := &SyncGroup{covered: map[string]bool{}}
	g.cond = sync.NewCond(&g.mu)
	w, ok := fsys.(WholeSyncer)
	if !ok {
		return g, nil
	}
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("durable: sync group over %s: %w", dir, err)
	}
	err = w.CanSyncFS(d)
	if err == nil {
		err = w.SyncFS(d)
	}
	if err != nil {
		_ = d.Close()
		if errors.Is(err, errors.ErrUnsupported) {
			return g, nil
		}
		return nil, fmt.Errorf("durable: sync group over %s: %w", dir, err)
	}
	g.dir, g.whole = d, w
	if info, err := d.Stat(); err == nil {
		g.dev, g.devKnown = deviceOf(info)
	}
	return g, nil
}

// Whole reports whether the group syncs the file system as a whole; when
// false, each Sync is the file's own.
func (g *SyncGroup) Whole() bool { return g.whole != nil }

// Sync returns once what was written to f before the call is durable:
// after a sync of the whole file system that started after the call, or
// f.Sync() where the file system cannot sync as a whole, where f is on
// another file system than the group's directory, and once the group has
// broken.
//
// A sync of the whole file system reports a write-back error once,
// whichever file it was of, and the error may surface in a sync other
// than the one the file's writer waits for (a sync under way when the
// file was written, or write-back in the background): the writer's next
// sync would then succeed though its data never reached the disk. So the
// first error breaks the group for good: the callers of that sync get it,
// and every Sync after it is the file's own, whose descriptor has not
// seen its file's error yet and reports it to the writer it concerns.
func (g *SyncGroup) Sync(f File) error {
	if g.whole == nil {
		return f.Sync()
	}
	g.mu.Lock()
	if g.broken != nil || g.closed || !g.coversLocked(f) {
		g.mu.Unlock()
		return f.Sync()
	}
	r := g.pending
	if r != nil {
		// A sync not started yet: it will start after this call.
		g.mu.Unlock()
		<-r.done
		return g.outcome(f, r)
	}
	r = &round{done: make(chan struct{})}
	g.pending = r
	for g.syncing && g.broken == nil && !g.closed {
		g.cond.Wait() // others join r meanwhile
	}
	g.pending = nil // r starts now: later callers need the next one
	if g.broken != nil || g.closed {
		g.mu.Unlock()
		r.own = true
		close(r.done)
		return g.outcome(f, r)
	}
	g.syncing = true
	g.mu.Unlock()
	r.err = g.whole.SyncFS(g.dir)
	g.mu.Lock()
	g.syncing = false
	if r.err != nil && g.broken == nil {
		g.broken = r.err
		if g.Logf != nil {
			g.Logf("durable: a sync of the file system of %s failed (%v): from now on each log fsyncs its own file", g.dir.Name(), r.err)
		}
	}
	g.cond.Broadcast()
	g.mu.Unlock()
	close(r.done)
	return g.outcome(f, r)
}

// outcome is what Sync of f returns once r is done.
func (g *SyncGroup) outcome(f File, r *round) error {
	switch {
	case r.own:
		return f.Sync()
	case r.err != nil:
		return fmt.Errorf("durable: sync of %s with its file system: %w", f.Name(), r.err)
	}
	return nil
}

// coversLocked reports whether f is on the file system of the group's
// directory, or cannot be told apart from it. The answer is kept by the
// file's name (a log's file keeps its path), so that an append costs no
// fstat. g.mu must be held.
func (g *SyncGroup) coversLocked(f File) bool {
	if !g.devKnown {
		return true
	}
	name := f.Name()
	if same, ok := g.covered[name]; ok {
		return same
	}
	same := false // cannot tell: its own fsync is always right
	if info, err := f.Stat(); err == nil {
		dev, ok := deviceOf(info)
		same = !ok || dev == g.dev
	}
	if len(g.covered) >= maxCovered {
		clear(g.covered) // files come and go with segments: start afresh
	}
	g.covered[name] = same
	return same
}

// maxCovered bounds the file names a group remembers.
const maxCovered = 1 << 16

// Broken is the error that made the group stop sharing syncs, nil while
// it shares them.
func (g *SyncGroup) Broken() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.broken
}

// Close waits for the sync under way, if any, and releases the group's
// directory; a Sync after Close is the file's own.
func (g *SyncGroup) Close() error {
	if g.dir == nil {
		return nil
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	g.cond.Broadcast()
	for g.syncing {
		g.cond.Wait()
	}
	g.mu.Unlock()
	return g.dir.Close()
}
