package bounds

import "sync"

// Inflight bounds the bytes of requests held in memory at once, over one
// port (the HTTP API's bodies, the internal API's bodies): a request
// reserves what it may take before it is read, and gives it back once
// answered. A reservation that does not fit is refused at once — the port
// answers with a retriable refusal — never waited for. The zero value
// admits nothing; NewInflight makes one. Safe for concurrent use.
type Inflight struct {
	limit int64

	// mu guards used.
	mu sync.Mutex
	// used is the bytes reserved by the requests in flight.
	used int64
}

// NewInflight returns a budget of limit bytes.
func NewInflight(limit int64) *Inflight { return &Inflight{limit: limit} }

// Limit is the budget's size in bytes.
func (f *Inflight) Limit() int64 { return f.limit }

// Acquire reserves n bytes and reports whether they fit under the limit.
func (f *Inflight) Acquire(n int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n < 0 || f.used+n > f.limit {
		return false
	}
	f.used += n
	return true
}

// Release returns n bytes acquired before.
func (f *Inflight) Release(n int64) {
	f.mu.Lock()
	f.used -= n
	f.mu.Unlock()
}

// Reserved is the bytes reserved now.
func (f *Inflight) Reserved() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.used
}
