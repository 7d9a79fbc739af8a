package kafka

import (
	"context"
	"sync"
	"time"
)

// budget bounds the request bytes held in memory at once: a frame's
// bytes are reserved before it is read and released once it is answered.
// Safe for concurrent use.
type budget struct {
	// mu guards left.
	mu   sync.Mutex
	left int64
}

// acquire reserves n bytes, waiting with a short backoff until deadline
// or ctx is done; false when they never came free.
func (b *budget) acquire(ctx context.Context, n int64, deadline time.Time) bool {
	wait := time.Millisecond
	for {
		b.mu.Lock()
		if b.left >= n {
			b.left -= n
			b.mu.Unlock()
			return true
		}
		b.mu.Unlock()
		if time.Now().Add(wait).After(deadline) {
			return false
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// tryAcquire reserves n bytes if they are free now, without waiting.
func (b *budget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n < 0 || b.left < n {
		return false
	}
	b.left -= n
	return true
}

// release gives back n bytes.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.left += n
	b.mu.Unlock()
}
