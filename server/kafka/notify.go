package kafka

import "sync"

// notifier wakes fetches waiting for new records of a partition when a
// produce through this listener acknowledges some. Writes that arrive by
// another path (the HTTP API) wake no one: a waiting fetch also looks
// again on a bounded backoff (fetch.go). Safe for concurrent use.
type notifier struct {
	// mu guards waiting.
	mu sync.Mutex
	// waiting maps a partition to the channels of the fetches waiting
	// for it; each has room for one wake-up.
	waiting map[partitionKey]map[chan struct{}]struct{}
}

type partitionKey struct {
	topic     string
	partition int32
}

func newNotifier() *notifier {
	return &notifier{waiting: map[partitionKey]map[chan struct{}]struct{}{}}
}

// register has ch woken at the next write to any of keys.
func (n *notifier) register(ch chan struct{}, keys []partitionKey) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, k := range keys {
		m, ok := n.waiting[k]
		if !ok {
			m = map[chan struct{}]struct{}{}
			n.waiting[k] = m
		}
		m[ch] = struct{}{}
	}
}

// unregister undoes register.
func (n *notifier) unregister(ch chan struct{}, keys []partitionKey) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, k := range keys {
		if m, ok := n.waiting[k]; ok {
			delete(m, ch)
			if len(m) == 0 {
				delete(n.waiting, k)
			}
		}
	}
}

// wrote wakes the partition's waiters.
func (n *notifier) wrote(k partitionKey) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch := range n.waiting[k] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
