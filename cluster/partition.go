package cluster

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
)

// topicState is one replicated topic in memory.
type topicState struct {
	name string
	rf   int
	// parts never changes after creation; each partition guards itself.
	parts []*partition
	// router routes every send to the topic, shared by all its producers.
	router *topic.Router
}

func newTopicState(name string, t TopicMetadata) *topicState {
	ts := &topicState{name: name, rf: t.ReplicationFactor, router: topic.NewRouter(len(t.Partitions))}
	for _, pm := range t.Partitions {
		p := &partition{topic: name, index: pm.Partition, followerEnd: map[int]uint64{}}
		p.idle = sync.NewCond(&p.mu)
		ts.parts = append(ts.parts, p)
	}
	return ts
}

func (t *topicState) info() TopicInfo {
	return TopicInfo{Name: t.name, PartitionCount: len(t.parts), ReplicationFactor: t.rf}
}

// partition is one replicated partition as this process knows it: its
// write queue and high watermark where this process hosts its leader. Its
// leadership is the metadata store's (partitionMeta), read afresh by every
// operation.
type partition struct {
	topic string
	index int

	// mu guards the write queue below. Writers hold it only to queue and
	// to take or hand back the writer slot, never across I/O. Failover,
	// recovery, catch-up, a leader move and retention take the partition
	// for their whole run (lockIdle: the writer slot idle, no batch in
	// flight and none started until they end) without holding mu, so
	// that whoever waits for them waits on idle.
	mu sync.Mutex
	// idle is signalled whenever writing or held turns false.
	idle *sync.Cond
	// queue holds sends waiting for the next batch.
	queue []*sendRequest
	// writing is true while one goroutine owns the writer slot.
	writing bool
	// held is true while an operation has the partition (lockIdle,
	// lockBesideWrite).
	held bool
	// exclusive counts the operations waiting in lockIdle. While it is
	// positive the writer stops after the batch in flight and leaves the
	// queue to whoever unlocks last, so a steady stream of sends cannot
	// starve them.
	exclusive int

	// hw is the high watermark: every active replica holds all records
	// below it. Where this process hosts the leader it rises with every
	// acknowledged batch and every refresh; elsewhere it is what the
	// leader last said. It never moves backwards while the process lives;
	// Open seeds it from hw.checkpoint, which the last clean Close wrote.
	hw watermark

	// endsMu guards followerEnd: each follower's log end as its last
	// answer to this process said, when this process hosts the leader.
	endsMu      sync.Mutex
	followerEnd map[int]uint64

	// deleted is set once the topic's deletion is in the metadata; every
	// later operation on p is refused with ErrUnknownTopic (goneLocked).
	deleted atomic.Bool
}

// lockIdle takes the partition for an operation: it waits until no batch
// is being written and no other operation has it, ahead of any send still
// queued. The sends queued meanwhile wait for Cluster.unlockIdle, which
// hands the queue back to a writer.
func (p *partition) lockIdle() {
	p.mu.Lock()
	p.exclusive++
	for p.writing || p.held {
		p.idle.Wait()
	}
	p.exclusive--
	p.held = true
	p.mu.Unlock()
}

// lockBesideWrite takes the partition for an operation that may run
// beside the batch in flight: it waits until no other operation has it,
// but not for the writer slot. Deactivate is the one: the batch it would
// wait for may itself be waiting for it — a follower that stopped
// answering without closing its connections (paused, cut off by a
// network that holds the bytes) holds the batch until it leaves the
// active set (replicate stops waiting for it then), which is what the
// deactivation commits. Batches go on being written while the operation
// runs, as they do on the leader's process when the controller runs on
// another. Release it with unlockIdle.
func (p *partition) lockBesideWrite() {
	p.mu.Lock()
	for p.held {
		p.idle.Wait()
	}
	p.held = true
	p.mu.Unlock()
}

// unlockIdle ends what lockIdle began: if sends queued up meanwhile and no
// other operation is waiting, a new writer takes the slot for them (their
// callers only wait for their results).
func (c *Cluster) unlockIdle(p *partition) {
	p.mu.Lock()
	p.held = false
	start := len(p.queue) > 0 && !p.writing && p.exclusive == 0
	if start {
		p.writing = true
	}
	p.idle.Broadcast()
	p.mu.Unlock()
	if start {
		c.startWriter(p)
	}
}

func (p *partition) String() string { return fmt.Sprintf("%s/%d", p.topic, p.index) }

// goneLocked returns an error wrapping ErrUnknownTopic once p's topic is
// deleted.
func (p *partition) goneLocked() error {
	if p.deleted.Load() {
		return fmt.Errorf("cluster: topic %q: deleted: %w", p.topic, ErrUnknownTopic)
	}
	return nil
}

// gone is goneLocked for a caller that does not hold p.mu.
func (c *Cluster) gone(p *partition) error { return p.goneLocked() }

// partitionMeta is p's leadership as the metadata store has it now.
func (c *Cluster) partitionMeta(p *partition) (PartitionMetadata, error) {
	if err := p.goneLocked(); err != nil {
		return PartitionMetadata{}, err
	}
	pm, err := readPartition(c.store, p.topic, p.index)
	if err != nil {
		return pm, fmt.Errorf("cluster: topic %q: deleted: %w", p.topic, ErrUnknownTopic)
	}
	return pm, nil
}

// checkEpoch refuses, with ErrStaleAction, an epoch that is not pm's; a
// nil epoch is not checked.
func checkEpoch(p *partition, pm PartitionMetadata, epoch *uint64) error {
	if epoch != nil && *epoch != pm.LeaderEpoch {
		return fmt.Errorf("cluster: %s: planned on leader epoch %d, now %d: %w", p, *epoch, pm.LeaderEpoch, ErrStaleAction)
	}
	return nil
}

// raiseHW moves p's high watermark up to to, never down, and tells
// Options.Advanced when it rose.
func (c *Cluster) raiseHW(p *partition, to uint64) {
	if p.hw.Raise(to) && c.opts.Advanced != nil {
		c.opts.Advanced(p.topic, p.index, to)
	}
}

// setFollowerEnd records follower id's log end as it last answered.
func (p *partition) setFollowerEnd(id int, end uint64) {
	p.endsMu.Lock()
	p.followerEnd[id] = end
	p.endsMu.Unlock()
}

// leaderLog returns the log of p's leader, which this process hosts, or a
// *LeaderUnavailableError when its broker is stopped or its log cannot be
// opened; a leader hosted elsewhere is a *NotLeaderError.
func (c *Cluster) leaderLog(p *partition, pm PartitionMetadata) (*member, *segment.Log, error) {
	if !c.hosts(pm.Leader) {
		return nil, nil, &NotLeaderError{Topic: p.topic, Partition: p.index, Broker: c.localID, Leader: pm.Leader}
	}
	m, err := c.hosted(pm.Leader)
	if err != nil {
		return nil, nil, leaderError(p, pm.Leader, err)
	}
	l, err := m.b.replica(p.topic, p.index, c.createMissing)
	if err != nil {
		return nil, nil, leaderError(p, pm.Leader, err)
	}
	return m, l, nil
}

// refreshHW advances the high watermark, where this process hosts the
// leader, to the smallest log end among the active replicas, asking each
// follower for its own (Transport.Records, which proves and changes
// nothing). If any active replica cannot be read (its broker is stopped,
// unreachable, or its log unreadable), its log end is unknown and the
// high watermark stays where it was: moving it on the other replicas alone
// could expose a record that replica lacks, which a later failover to it
// would discard. Where it was is never less than what the last clean Close
// recorded in hw.checkpoint, so a restart without a broker still serves
// every record that was below the watermark at shutdown
// (docs/design.md § High watermark).
func (c *Cluster) refreshHW(p *partition) uint64 {
	hw := p.hw.Load()
	pm, err := c.partitionMeta(p)
	if err != nil {
		return hw
	}
	_, l, err := c.leaderLog(p, pm)
	if err != nil {
		return hw
	}
	low := l.NextOffset()
	if low <= hw {
		return hw
	}
	// A follower of another process that the heartbeats show down
	// cannot be read: the watermark stays, without a probe that would
	// wait for it (a paused process, a network that holds the bytes,
	// answers nothing until the probe's deadline) — and hold up whoever
	// asked, the controller's pass among them.
	for _, id := range pm.Active {
		if id != pm.Leader && !c.hosts(id) && c.observer != nil && !c.observer.Broker(id).Available {
			return hw
		}
	}
	// A follower that went silent a moment ago still counts up; its
	// answer is waited for no longer than it takes the heartbeats to
	// count it down (statusWait).
	ctx, cancel := context.WithTimeout(context.Background(), c.askWait())
	defer cancel()
	end := low
	var ends []followerEnd
	for _, id := range pm.Active {
		if id == pm.Leader {
			continue
		}
		// One request: the follower's bounds, and its record just below
		// the leader's log end when it reaches that far.
		res, err := c.transport.Records(ctx, id, RecordsRequest{Topic: p.topic, Partition: p.index, From: end - 1, MaxBytes: 1, MaxRecords: 1})
		if err != nil {
			return hw
		}
		p.setFollowerEnd(id, res.LogEnd)
		low = min(low, res.LogEnd)
		ends = append(ends, followerEnd{id, res})
	}
	if low <= hw {
		return hw
	}
	// A follower's log end says how far its log reaches, not that it is
	// this leader's log: a leader cut off from the others, which has not
	// yet applied its own failover, asks followers whose logs a newer
	// leader wrote, over offsets where it holds records it never
	// acknowledged. So the watermark rises only when every follower holds,
	// at low-1, the very record this leader holds there (offset, append
	// time and payload, which followers copy frame for frame): logs that
	// agree on a record agree on every record before it, since a replica
	// only ever copies a prefix of some leader's log.
	mine, err := l.Read(low-1, 1)
	if err != nil || len(mine) != 1 {
		return hw
	}
	for _, f := range ends {
		theirs := f.res.Records
		if low < end || len(theirs) != 1 {
			res, err := c.transport.Records(ctx, f.id, RecordsRequest{Topic: p.topic, Partition: p.index, From: low - 1, MaxBytes: 1, MaxRecords: 1})
			if err != nil {
				return hw
			}
			theirs = res.Records
		}
		if len(theirs) != 1 || !sameRecord(theirs[0], mine[0]) {
			return hw
		}
	}
	c.raiseHW(p, low)
	return p.hw.Load()
}

// followerEnd is one follower's answer to refreshHW's probe.
type followerEnd struct {
	id  int
	res RecordsResponse
}

// sameRecord reports whether two replicas hold the same record: the same
// offset, append time and payload.
func sameRecord(a, b log.Record) bool {
	return a.Offset == b.Offset && a.Timestamp == b.Timestamp && bytes.Equal(a.Payload, b.Payload)
}

// followersOf is the active replicas other than the leader, in order.
func followersOf(leader int, active []int) []int {
	return slices.DeleteFunc(slices.Clone(active), func(id int) bool { return id == leader })
}
