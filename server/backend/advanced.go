package backend

import "sync"

// Partition names one partition of one topic.
type Partition struct {
	Topic     string
	Partition int
}

// Hub is the one "partition advanced" event: the wiring hands Advanced to
// the cluster (cluster.Options.Advanced, clusternode.Config.Advanced),
// which calls it each time a partition's high watermark rises, whatever
// the write came through (the HTTP API, the Kafka listener, a follower
// applying its leader's records); whoever waits for new records watches
// the hub instead of polling. The zero value is not usable: build one
// with NewHub. A Hub is safe for concurrent use.
//
// A watcher is a channel with room for one wake-up (make(chan struct{},
// 1)): Advanced never blocks on it, and wake-ups that arrive before the
// watcher takes one coalesce into it. The watcher then reads what it
// waits for itself; the hub carries no records and no offsets.
type Hub struct {
	// mu guards the fields below. Advanced runs under the cluster's
	// partition lock, so nothing is done with mu held but map work and
	// non-blocking sends.
	mu sync.Mutex
	// byPartition maps a partition to the channels watching it.
	byPartition map[Partition]map[chan struct{}]struct{}
	// all are the channels watching every partition.
	all map[chan struct{}]struct{}
}

// NewHub returns a hub with no watchers.
func NewHub() *Hub {
	return &Hub{byPartition: map[Partition]map[chan struct{}]struct{}{}, all: map[chan struct{}]struct{}{}}
}

// Advanced wakes the watchers of the partition and of every partition.
// It never blocks: its signature is cluster.Options.Advanced's.
func (h *Hub) Advanced(topicName string, partition int, _ uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.byPartition[Partition{topicName, partition}] {
		wake(ch)
	}
	for ch := range h.all {
		wake(ch)
	}
}

// wake sends ch its one wake-up unless it holds one already.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Watch has ch woken each time the high watermark of one of parts rises,
// until stop is called. A channel is watched by one Watch at a time.
func (h *Hub) Watch(ch chan struct{}, parts ...Partition) (stop func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range parts {
		m, ok := h.byPartition[p]
		if !ok {
			m = map[chan struct{}]struct{}{}
			h.byPartition[p] = m
		}
		m[ch] = struct{}{}
	}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, p := range parts {
			if m, ok := h.byPartition[p]; ok {
				delete(m, ch)
				if len(m) == 0 {
					delete(h.byPartition, p)
				}
			}
		}
	}
}

// WatchAll has ch woken each time any partition's high watermark rises,
// until stop is called.
func (h *Hub) WatchAll(ch chan struct{}) (stop func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.all[ch] = struct{}{}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.all, ch)
	}
}
