package cluster

import "time"

// writerIdle is how long a partition's writer that found its queue empty
// waits to be handed another partition's before it ends.
const writerIdle = time.Second

// writers hands a partition's writer slot to a goroutine (enqueue,
// unlockIdle): one that wrote an earlier batch and now waits, when one
// does, else a new one. A writer's goroutine grows its stack deep in the
// write path (append, fsync, replication); reusing it, rather than
// starting a goroutine whose stack is grown again for each batch, is what
// keeps a busy broker's cost per batch down.
type writers struct {
	handoff chan *partition
	// done closes with the cluster: the waiting writers end.
	done chan struct{}
}

func newWriters() writers {
	return writers{handoff: make(chan *partition), done: make(chan struct{})}
}

// startWriter writes p's queue on another goroutine. p.writing must be
// set, and p.mu not held.
func (c *Cluster) startWriter(p *partition) {
	select {
	case c.writers.handoff <- p:
	default:
		go c.writer(p)
	}
}

// writer drains p, then the partitions handed to it, until none is for
// writerIdle or the cluster closes.
func (c *Cluster) writer(p *partition) {
	idle := time.NewTimer(writerIdle)
	defer idle.Stop()
	for {
		p.mu.Lock()
		c.drainLocked(p)
		idle.Reset(writerIdle)
		select {
		case p = <-c.writers.handoff:
		case <-idle.C:
			return
		case <-c.writers.done:
			return
		}
	}
}
