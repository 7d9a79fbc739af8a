package group

import "sync"

// gate keeps a group's commits apart from its fences. A commit's check
// and its durable write are two steps, the write made by the caller after
// the check: a commit enters the gate with its check (under the
// coordinator's lock) and leaves it once its write is done. A fence —
// whatever makes a member's commits stale: a new generation or epoch, a
// member removed or replaced, a partition released — drains the gate
// (under the coordinator's lock) before the coordinator answers anyone:
// every commit checked before the fence has landed, and every commit
// checked after it sees the fence and is refused. So a fenced member's
// commit never lands after the fence.
//
// Entering and draining both happen with the coordinator's lock held, so
// no commit enters while a drain waits. The wait is a sync.Cond, which
// testing/synctest counts as durably blocked. A gate is safe for
// concurrent use.
type gate struct {
	// mu guards inside; cond is signalled when it drops to zero.
	mu     sync.Mutex
	cond   *sync.Cond
	inside int
}

func newGate() *gate {
	g := &gate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// enter admits one commit; the returned function lets it out, and may be
// called more than once.
func (g *gate) enter() (leave func()) {
	g.mu.Lock()
	g.inside++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.inside--; g.inside == 0 {
				g.cond.Broadcast()
			}
		})
	}
}

// drain waits until no commit is inside.
func (g *gate) drain() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.inside > 0 {
		g.cond.Wait()
	}
}

// noCommit is the leave of a commit that entered no gate.
func noCommit() {}
