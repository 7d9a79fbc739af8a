package cluster

import (
	"fmt"
	"github.com/pystream/pystream/topic"
	"slices"
	"sync"

	"github.com/pystream/pystream/log/segment"
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
		p := &partition{topic: name, index: pm.Partition}
		p.idle = sync.NewCond(&p.mu)
		p.applyLocked(pm)
		ts.parts = append(ts.parts, p)
	}
	return ts
}

func (t *topicState) info() TopicInfo {
	return TopicInfo{Name: t.name, PartitionCount: len(t.parts), ReplicationFactor: t.rf}
}

// partition is the in-memory state of one replicated partition: its
// leadership (a mirror of cluster.meta, changed only after cluster.meta is
// written), its high watermark and its write queue.
type partition struct {
	topic string
	index int

	// mu guards every field below. Writers hold it only to queue and to
	// take or hand back the writer slot, never across disk I/O; failover,
	// recovery and catch-up hold it (with the writer slot idle) for their
	// whole run, which excludes writes to the partition while they work.
	mu sync.Mutex
	// idle is signalled whenever writing turns false.
	idle *sync.Cond
	// leader, epoch, replicas (placement order) and active (ascending)
	// mirror the partition's entry in cluster.meta.
	leader   int
	epoch    uint64
	replicas []int
	active   []int
	// hw is the high watermark: every active replica holds all records
	// below it. It only moves forward while the process lives; Open seeds
	// it from hw.checkpoint, which the last clean Close wrote.
	hw uint64
	// queue holds sends waiting for the next batch.
	queue []*sendRequest
	// writing is true while one goroutine owns the writer slot.
	writing bool
	// exclusive counts failover, recovery and catch-up calls waiting in
	// lockIdle. While it is positive the writer stops after the batch in
	// flight and leaves the queue to whoever unlocks last, so a steady
	// stream of sends cannot starve them.
	exclusive int
	// deleted is set, with the writer slot idle, once the topic's deletion
	// is in cluster.meta; every later operation on p is refused with
	// ErrUnknownTopic (see goneLocked).
	deleted bool
}

// lockIdle locks p and waits until no batch is being written, ahead of any
// send still queued. Callers hold p.mu afterwards and must release it with
// Cluster.unlockIdle, which hands the queue back to a writer.
func (p *partition) lockIdle() {
	p.mu.Lock()
	p.exclusive++
	for p.writing {
		p.idle.Wait()
	}
	p.exclusive--
}

// unlockIdle ends what lockIdle began: if sends queued up meanwhile and no
// other exclusive call is waiting, a new writer takes the slot for them
// (their callers only wait for their results), then p.mu is released.
func (c *Cluster) unlockIdle(p *partition) {
	if len(p.queue) > 0 && !p.writing && p.exclusive == 0 {
		p.writing = true
		go func() {
			p.mu.Lock()
			c.drainLocked(p)
		}()
	}
	p.mu.Unlock()
}

// metadataLocked returns p's leadership as cluster.meta records it. p.mu
// must be held.
func (p *partition) metadataLocked() PartitionMetadata {
	return PartitionMetadata{Partition: p.index, Leader: p.leader, LeaderEpoch: p.epoch, Replicas: slices.Clone(p.replicas), Active: slices.Clone(p.active)}
}

// applyLocked replaces p's leadership. p.mu must be held (or p not yet
// shared).
func (p *partition) applyLocked(pm PartitionMetadata) {
	p.leader = pm.Leader
	p.epoch = pm.LeaderEpoch
	p.replicas = slices.Clone(pm.Replicas)
	p.active = slices.Clone(pm.Active)
}

// checkEpochLocked refuses, with ErrStaleAction, an epoch that is not p's;
// a nil epoch is not checked. A partition of a deleted topic is refused
// first, with ErrUnknownTopic. p.mu must be held.
func (p *partition) checkEpochLocked(epoch *uint64) error {
	if err := p.goneLocked(); err != nil {
		return err
	}
	if epoch != nil && *epoch != p.epoch {
		return fmt.Errorf("cluster: %s: planned on leader epoch %d, now %d: %w", p, *epoch, p.epoch, ErrStaleAction)
	}
	return nil
}

func (p *partition) assignedLocked(id int) bool {
	return slices.Contains(p.replicas, id)
}

func (p *partition) activeLocked(id int) bool {
	return slices.Contains(p.active, id)
}

func (p *partition) String() string { return fmt.Sprintf("%s/%d", p.topic, p.index) }

// replicaLog returns broker id's log of partition p, or an error wrapping
// ErrBrokerUnavailable when the broker is not registered or closed.
func (c *Cluster) replicaLog(p *partition, id int) (*segment.Log, error) {
	b := c.broker(id)
	if b == nil {
		return nil, fmt.Errorf("cluster: broker %d: not registered: %w", id, ErrBrokerUnavailable)
	}
	return b.replica(p.topic, p.index, false)
}

// leaderLogLocked returns the leader's log, or a *LeaderUnavailableError.
// p.mu must be held.
func (c *Cluster) leaderLogLocked(p *partition) (*segment.Log, error) {
	l, err := c.replicaLog(p, p.leader)
	if err != nil {
		return nil, leaderError(p, p.leader, err)
	}
	return l, nil
}

// refreshHWLocked advances the high watermark to the smallest log end among
// the active replicas. If any active replica cannot be read (its broker is
// unavailable — stopped, or not started by this process — or its log
// unreadable), its log end is unknown and the high watermark stays where it
// was: moving it on the other replicas alone could expose a record that
// replica lacks, which a later failover to it would discard (once it is
// back, it is an active candidate, and the only one if the others are down
// by then). Where it was is never less than what the last clean Close
// recorded in hw.checkpoint, so a restart without a broker still serves
// every record that was below the watermark at shutdown
// (docs/design.md § High watermark). p.mu must be held.
func (c *Cluster) refreshHWLocked(p *partition) uint64 {
	var low uint64
	for i, id := range p.active {
		l, err := c.replicaLog(p, id)
		if err != nil {
			return p.hw
		}
		end := l.NextOffset()
		if i == 0 || end < low {
			low = end
		}
	}
	c.raiseHWLocked(p, low)
	return p.hw
}

// raiseHWLocked moves p's high watermark up to to, never down, and tells
// Options.Advanced when it rose. p.mu must be held.
func (c *Cluster) raiseHWLocked(p *partition, to uint64) {
	if to <= p.hw {
		return
	}
	p.hw = to
	if c.opts.Advanced != nil {
		c.opts.Advanced(p.topic, p.index, to)
	}
}
