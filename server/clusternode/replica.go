package clusternode

import (
	"sync"

	"github.com/pystream/pystream/log"
)

// replica is this node's state of one of its partition replicas, beside
// the log the broker holds. It is safe for concurrent use.
type replica struct {
	topic     string
	partition int

	// mu guards the leader's fields: the queue of writes waiting, whether
	// one is being written, the high watermark and the followers' known
	// log ends.
	mu      sync.Mutex
	queue   []*sendRequest
	writing bool
	// hw is the high watermark this node knows: as leader, the end of the
	// prefix every active replica holds; as follower, the last one its
	// leader sent. Consumers are served only below it.
	hw uint64
	// followerEnd is each follower's log end as its last answer said.
	followerEnd map[int]uint64

	// fmu serialises what changes the log: as a follower, appends from
	// the leader, a cut back to the common prefix, a pull; as the leader,
	// its own append with the last check of its leadership.
	fmu sync.Mutex
	// syncedEpoch is the leader epoch at which this replica last proved
	// itself a prefix of its leader's log (synced true).
	syncedEpoch uint64
	synced      bool
	// caughtUp is set when a pull reached the leader's log end at
	// syncedEpoch.
	caughtUp bool
	// diverged is set when the leader's records disagree with ours below
	// a point we were told was committed: never repaired on our own.
	diverged bool
}

// sendRequest is one caller's records waiting for the partition's writer.
type sendRequest struct {
	payloads [][]byte
	done     chan struct{}
	// Set before done is closed:
	recs    []log.Record
	brokers []int
	err     error
}

// replica returns this node's state of a partition, made on first use.
func (n *Node) replica(topicName string, partition int) *replica {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := partKey{topicName, partition}
	r, ok := n.replicas[k]
	if !ok {
		r = &replica{topic: topicName, partition: partition, followerEnd: map[int]uint64{}}
		n.replicas[k] = r
	}
	return r
}

// raiseHW moves r's high watermark up to to, never down, and tells
// Config.Advanced when it rose.
func (n *Node) raiseHW(r *replica, to uint64) {
	r.mu.Lock()
	rose := to > r.hw
	r.hw = max(r.hw, to)
	r.mu.Unlock()
	if rose && n.cfg.Advanced != nil {
		n.cfg.Advanced(r.topic, r.partition, to)
	}
}

func (r *replica) highWatermark() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hw
}
