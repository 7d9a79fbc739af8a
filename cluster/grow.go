package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/pystream/pystream/topic"
)

// This file is the growth of a topic: partitions added to it
// (docs/design.md § Adding partitions to a topic). It follows
// the creation of a topic (create.go) step by step and shares its steps:
// the new partitions are placed as a creation places them
// (GrownTopicMetadata, over Placement), their replica logs created by
// createReplicas, and cluster.meta is the commit point. Until the file
// lists the new count, the topic has its old partitions and whatever
// replica files of the new ones are on disk belong to no partition:
//
//  1. Reserve, under Cluster.mu and Cluster.metaMu: the topic exists, the
//     count grows (GrownTopicMetadata), the new replica logs fit under
//     Options.MaxOpenLogs, every placed broker is available; the name is
//     entered in Cluster.growing. A second growth of the topic waits for
//     the first and is then decided on the count it left; a deletion of
//     the topic waits too.
//  2. Without the lock: what a crashed growth left of the new partitions
//     (replica directories holding only empty logs) is removed, then their
//     replica logs are created and opened on their brokers.
//  3. Commit: cluster.meta is written with the new partitions appended to
//     the topic as the file holds it now (a failover meanwhile kept), then
//     the grown topic is published.
//
// A growth that fails after the reservation is rolled back: the new
// replica logs closed and their directories removed, cluster.meta as it
// was. A crash at any step leaves cluster.meta with the old count and at
// most empty directories of partitions it does not list (never read at
// start-up; the next growth removes them), or the new count with every
// replica created.

// growth is a growth between its reservation and its commit or rollback.
type growth struct {
	// cr holds the new partitions only (cr.tm.Partitions), for
	// createReplicas; cr.done is closed once the growth ends.
	cr *creation
	// from is the topic's partition count at the reservation.
	from int
}

// AddPartitions grows topic name to partitions partitions: the new ones,
// numbered from the current count on, are placed as CreateTopic places a
// topic's (Placement, over the brokers known now), their replica logs
// created empty on their brokers (each must be available), and the new
// count committed to the metadata at once. Records already written stay
// where they are; keyed records sent afterwards route by the new count
// (topic.Router: key hash mod partition count), so a key may land on
// another partition than before.
//
// An unknown topic is ErrUnknownTopic (a topic whose deletion committed
// is unknown, its files still being removed or not); a count not larger
// than the topic's, or past topic.MaxPartitionCount, is
// ErrInvalidPartitionCount; new replica logs past Options.MaxOpenLogs an
// *OpenLogsLimitError. Any refusal changes nothing. In cluster mode the
// growth is one command of the metadata group (OpAddPartitions), each
// process creating its own new replicas as it first uses them.
func (c *Cluster) AddPartitions(name string, partitions int) error {
	if err := topic.ValidateName(name); err != nil {
		return fmt.Errorf("cluster: add partitions to topic %q: %w: %w", name, ErrUnknownTopic, err)
	}
	if partitions > topic.MaxPartitionCount {
		return fmt.Errorf("cluster: add partitions to topic %q: %d partitions, want at most %d: %w", name, partitions, topic.MaxPartitionCount, ErrInvalidPartitionCount)
	}
	if ts := c.topicStore(); ts != nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
		defer cancel()
		if err := ts.AddPartitions(ctx, name, partitions); err != nil {
			return err
		}
		_, err := c.topic(name) // this process's copy of the topic grows now
		return err
	}
	g, err := c.reserveGrowth(name, partitions)
	if err != nil {
		return err
	}
	err = c.removeGrowthLeftovers(name, g)
	if err != nil {
		// Nothing was created: what is there stays as it was found.
		c.releaseGrowth(name, g)
		return fmt.Errorf("cluster: add partitions to topic %q: %w", name, err)
	}
	err = c.createReplicas(name, g.cr)
	keep := false
	if err == nil {
		if keep, err = c.commitGrowth(name, g); err == nil {
			c.releaseGrowth(name, g)
			return nil
		}
	}
	err = fmt.Errorf("cluster: add partitions to topic %q: %w", name, err)
	if rerr := c.rollBackGrowth(name, g, keep); rerr != nil {
		err = errors.Join(err, fmt.Errorf("cluster: add partitions to topic %q: roll back: %w", name, rerr))
	}
	c.releaseGrowth(name, g)
	return err
}

// reserveGrowth decides a growth under the locks and enters the topic in
// c.growing. It waits for another growth of the topic.
func (c *Cluster) reserveGrowth(name string, partitions int) (*growth, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if other := c.growing[name]; other != nil {
			c.mu.Unlock()
			<-other.cr.done // then decided on the count it left
			continue
		}
		break
	}
	defer c.mu.Unlock()
	c.files.metaMu.Lock()
	defer c.files.metaMu.Unlock()
	tm, ok := c.files.meta.Topics[name]
	if !ok {
		return nil, fmt.Errorf("cluster: add partitions to topic %q: %w", name, ErrUnknownTopic)
	}
	next, err := GrownTopicMetadata(tm, c.files.meta.Brokers, partitions)
	if err != nil {
		return nil, fmt.Errorf("cluster: add partitions to topic %q: %w", name, err)
	}
	added := TopicMetadata{PartitionCount: partitions, ReplicationFactor: tm.ReplicationFactor, Partitions: next.Partitions[len(tm.Partitions):]}
	g := &growth{from: len(tm.Partitions), cr: &creation{done: make(chan struct{}), logs: (partitions - len(tm.Partitions)) * tm.ReplicationFactor,
		tm: added, brokers: map[int]*Broker{}, known: slices.Clone(c.files.meta.Brokers)}}
	if limit := c.opts.MaxOpenLogs; limit > 0 {
		if held := c.replicaLogsLocked(); held+g.cr.logs > limit {
			return nil, &OpenLogsLimitError{Topic: name, Requested: g.cr.logs, Held: held, Limit: limit}
		}
	}
	for _, pm := range added.Partitions {
		for _, id := range pm.Assigned() {
			m := c.members[id]
			if m == nil || !m.b.Available() {
				return nil, fmt.Errorf("cluster: add partitions to topic %q: broker %d: %w", name, id, ErrBrokerUnavailable)
			}
			g.cr.brokers[id] = m.b
		}
	}
	c.growing[name] = g
	return g, nil
}

// removeGrowthLeftovers removes what a crashed growth of topic name left
// of g's new partitions on the known brokers: replica directories of
// partitions cluster.meta does not list. As for a creation
// (removeLeftovers), only a directory holding nothing but empty files is
// removed; one holding records refuses the growth (ErrTopicExists).
func (c *Cluster) removeGrowthLeftovers(name string, g *growth) error {
	for _, id := range g.cr.known {
		fsys := c.opts.Broker.FS
		if b := c.broker(id); b != nil {
			fsys = b.opts.FS
		}
		parent := filepath.Join(BrokerDir(c.root, id), brokerTopicsDir, name)
		for _, pm := range g.cr.tm.Partitions {
			dir := topic.PartitionLogDir(parent, pm.Partition)
			if _, err := fsys.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				continue
			} else if err != nil {
				return err
			}
			if err := onlyEmptyFiles(fsys, dir); err != nil {
				return fmt.Errorf("broker %d: %w", id, err)
			}
			if err := removeEntry(fsys, parent, topic.PartitionDir(pm.Partition)); err != nil {
				return fmt.Errorf("remove %s, left by an earlier growth: %w", dir, err)
			}
		}
	}
	return nil
}

// commitGrowth writes cluster.meta with g's partitions appended to the
// topic as the file holds it now (under c.files.metaMu only), then
// publishes the grown topic (under c.mu). inDoubt is commitCreation's.
func (c *Cluster) commitGrowth(name string, g *growth) (inDoubt bool, err error) {
	c.mu.RLock()
	closed := c.closed
	c.mu.RUnlock()
	if closed {
		return false, ErrClosed
	}
	c.files.metaMu.Lock()
	next := c.files.meta.clone()
	tm, ok := next.Topics[name]
	switch {
	case !ok:
		err = fmt.Errorf("topic %q: %w", name, ErrUnknownTopic)
	case len(tm.Partitions) != g.from:
		// A growth is exclusive (c.growing): this is no state it leaves.
		err = fmt.Errorf("topic %q has %d partition(s), not the %d the growth was decided on: %w", name, len(tm.Partitions), g.from, ErrInvalidPartitionCount)
	default:
		for _, pm := range g.cr.tm.Partitions {
			tm.Partitions = append(tm.Partitions, pm.clone())
		}
		tm.PartitionCount = len(tm.Partitions)
		next.Topics[name] = tm
		err = c.files.persistLocked(next)
		inDoubt = c.files.metaFailed != nil
	}
	c.files.metaMu.Unlock()
	if err != nil {
		return inDoubt, err
	}
	c.mu.Lock()
	if t := c.topics[name]; t != nil {
		c.topics[name] = t.grown(tm)
	}
	c.mu.Unlock()
	return false, nil
}

// releaseGrowth ends g's reservation and wakes whoever waits for it.
func (c *Cluster) releaseGrowth(name string, g *growth) {
	c.mu.Lock()
	if c.growing[name] == g {
		delete(c.growing, name)
	}
	c.mu.Unlock()
	close(g.cr.done)
}

// rollBackGrowth undoes what createReplicas did for g: the placed brokers
// close and forget the new partitions' logs, then every known broker's
// directories of them are removed and the topic's directory fsync-ed.
// With keepFiles (cluster.meta in doubt) the logs are closed and the
// directories stay.
func (c *Cluster) rollBackGrowth(name string, g *growth, keepFiles bool) error {
	for _, id := range sortedKeys(g.cr.brokers) {
		for _, pm := range g.cr.tm.Partitions {
			g.cr.brokers[id].dropReplica(name, pm.Partition)
		}
	}
	if keepFiles {
		return nil
	}
	var errs []error
	for _, id := range g.cr.known {
		fsys := c.opts.Broker.FS
		if b := g.cr.brokers[id]; b != nil {
			fsys = b.opts.FS
		}
		parent := filepath.Join(BrokerDir(c.root, id), brokerTopicsDir, name)
		for _, pm := range g.cr.tm.Partitions {
			if err := removeEntry(fsys, parent, topic.PartitionDir(pm.Partition)); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", topic.PartitionLogDir(parent, pm.Partition), err))
			}
		}
	}
	return errors.Join(errs...)
}

// grown is t with the partitions of tm it does not have yet added: the
// partitions it has are kept as they are (their write queues, high
// watermarks and waiting sends go on), and the router routes by the new
// count. t itself is not changed (its parts never change); the caller
// publishes the result in c.topics under c.mu.
func (t *topicState) grown(tm TopicMetadata) *topicState {
	if len(tm.Partitions) <= len(t.parts) {
		return t
	}
	more := newTopicState(t.name, tm)
	g := &topicState{name: t.name, rf: t.rf, parts: slices.Clone(t.parts), router: more.router}
	g.parts = append(g.parts, more.parts[len(t.parts):]...)
	return g
}

// dropReplica closes and forgets the broker's log of one partition, if it
// is open (a growth rolled back); the next use opens it again.
func (b *Broker) dropReplica(topicName string, partition int) {
	key := replicaKey{topicName, partition}
	b.mu.Lock()
	l, h := b.logs[key], b.epochs[key]
	delete(b.logs, key)
	delete(b.epochs, key)
	b.mu.Unlock()
	if h != nil {
		h.close()
	}
	if l != nil {
		_ = l.Close()
	}
}
