package cluster

import (
	"sync"
	"sync/atomic"
)

// member is a broker the Cluster hosts, with what it knows of each of its
// replicas as a follower. The brokers of one process are all members of
// its Cluster; in cluster mode a process's Cluster has one member, its own
// broker. A member answers what the other brokers ask of its replicas
// (follower.go, records.go); its partitions' writes, when it leads them,
// run in the Cluster (leader.go). It is safe for concurrent use.
type member struct {
	c *Cluster
	b *Broker

	// mu guards replicas.
	mu sync.Mutex
	// replicas holds each replica's follower state, made on first use.
	replicas map[replicaKey]*replicaState
}

// replicaState is what a member knows of one of its replicas beyond its
// log.
type replicaState struct {
	// fmu serialises what changes the log: as a follower, a leader's
	// appends, a proof at a new epoch, a cut; as the leader, its own
	// append together with the last check of its leadership. A replaced
	// leader either sees the new epoch at that check and appends nothing,
	// or appends before the proof at the new epoch, which then finds the
	// records and cuts them.
	fmu sync.Mutex
	// syncedEpoch is the leader epoch at which this replica last proved
	// itself a prefix of its leader's log (synced true); a leader's first
	// write of a new epoch proves it again.
	syncedEpoch uint64
	synced      bool
	// hw is the high watermark the leader last sent: every active replica
	// holds every record below it.
	hw watermark
	// producers is the replica's idempotent producers as of its log,
	// kept by the leader (producers.go) and at each roll by a follower
	// (snapshotAsFollower); nil until a write or a roll needs it.
	producers *producerTable
	// rollSeen and rollBase: the active segment's base as a follower's
	// append last saw it.
	rollSeen bool
	rollBase uint64
}

func newMember(c *Cluster, b *Broker) *member {
	return &member{c: c, b: b, replicas: map[replicaKey]*replicaState{}}
}

// id is the member's broker id.
func (m *member) id() int { return m.b.id }

// replica returns the member's state of one replica, made on first use.
func (m *member) replica(k replicaKey) *replicaState {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.replicas[k]
	if !ok {
		r = &replicaState{}
		m.replicas[k] = r
	}
	return r
}

// forget drops the state of a deleted topic's replicas.
func (m *member) forget(topicName string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.replicas {
		if k.topic == topicName {
			delete(m.replicas, k)
		}
	}
}

// watermark is a high watermark that only rises, readable without a lock.
type watermark struct{ v atomic.Uint64 }

// Load returns the watermark.
func (w *watermark) Load() uint64 { return w.v.Load() }

// Raise moves the watermark up to to, never down, and reports whether it
// rose.
func (w *watermark) Raise(to uint64) bool {
	for {
		old := w.v.Load()
		if to <= old {
			return false
		}
		if w.v.CompareAndSwap(old, to) {
			return true
		}
	}
}

// Lower moves the watermark down to to, never up: a replica cut back below
// what it was told holds no more than it now holds.
func (w *watermark) Lower(to uint64) {
	for {
		old := w.v.Load()
		if to >= old || w.v.CompareAndSwap(old, to) {
			return
		}
	}
}

// Set replaces the watermark (a checkpoint read at start, before anyone
// reads it).
func (w *watermark) Set(to uint64) { w.v.Store(to) }
