package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pystream/pystream/topic"
)

// This file is the creation of a topic. Its commit point is cluster.meta:
// once the file lists the topic, the topic exists; before, whatever replica
// files are on disk belong to no topic. The file I/O of a creation (one
// directory and one empty log per replica, thousands for a large topic) is
// done without the cluster-wide lock, so that the other topics keep serving
// while it runs:
//
//  1. Reserve, under Cluster.mu and Cluster.metaMu: the name is checked
//     (taken, or differing only in letter case from a topic that exists or
//     is being created), the placement computed, the replica logs counted
//     against Options.MaxOpenLogs, and the name entered in
//     Cluster.creating. A second creation of the name waits for the first
//     to finish, then sees the topic (a *TopicExistsError) or, if the first
//     rolled back, tries itself. A deletion of the name meanwhile finds no
//     topic (ErrUnknownTopic).
//  2. Without the lock: what a crashed creation of the name left (replica
//     directories holding only empty logs) is removed, the replica logs
//     are created and opened on their brokers, and any committed consumer
//     offset left under the name is removed.
//  3. Commit: cluster.meta is written under Cluster.metaMu alone, then the
//     topic is published under Cluster.mu and the reservation released.
//
// If any step after the reservation fails, the creation rolls back: every
// replica log it opened is closed and forgotten by its broker, every
// replica directory of the name removed and the broker's topics/ directory
// fsync-ed, and cluster.meta is left as it was. A crash at any step leaves
// cluster.meta without the topic and at most empty replica directories,
// which the next creation of the name removes (step 2); nothing of them is
// read at start-up.

// creation is a topic creation between its reservation and its commit or
// rollback. While it is in Cluster.creating, no other creation of its name
// runs.
type creation struct {
	// done is closed once the creation committed or rolled back.
	done chan struct{}
	// logs is the number of replica logs it opens: partitions ×
	// replication factor.
	logs int
	// tm is the topic's metadata, its placement decided at the reservation.
	tm TopicMetadata
	// brokers are the placed brokers' instances, as registered at the
	// reservation.
	brokers map[int]*Broker
	// known are the brokers cluster.meta listed at the reservation: any of
	// them may hold what a crashed creation of the name left.
	known []int
}

// CreateTopic creates a replicated topic. It validates the name first, then
// requires partitions >= 1 and 1 <= replicationFactor <= the number of known
// brokers, computes the static placement once (Placement), creates every
// replica's empty log on its broker (each placed broker must be available),
// and writes cluster.meta before returning. Bad arguments change nothing on
// disk. A name that is taken returns a *TopicExistsError; a name that
// differs only in letter case from an existing topic's, a
// *TopicNameConflictError (a data directory must survive a copy to a file
// system that ignores case). A creation whose replica logs, added to those
// of every existing topic, would exceed Options.MaxOpenLogs returns an
// *OpenLogsLimitError and changes nothing.
//
// The creation's file I/O runs without the cluster-wide lock: sends, reads
// and operations on other topics go on meanwhile (see the comment at the
// top of create.go). A failed creation is rolled back whole: its replica
// logs closed, their directories removed, cluster.meta untouched.
//
// A new topic starts with nothing of an earlier topic of the same name: a
// deletion of that name still removing its files is waited for (and one
// that failed to is finished first, else CreateTopic fails with
// ErrDeleteUnfinished), and any committed consumer offset left under the
// name (a consumer of the deleted topic committing after the deletion) is
// removed before cluster.meta is written.
//
// The topic has no configuration overrides: its configuration is the
// cluster's TopicDefaults (CreateTopicWithConfig sets some).
func (c *Cluster) CreateTopic(name string, partitions, replicationFactor int) error {
	return c.CreateTopicWithConfig(name, partitions, replicationFactor, nil)
}

// CreateTopicWithConfig is CreateTopic with configuration overrides, the
// keys of the topic's configuration that differ from the cluster's
// TopicDefaults (topic.ConfigKeys). They are checked with the name and
// counts, before anything is touched: an unknown key or a bad value is a
// *topic.ConfigError and creates nothing. They are stored, in canonical
// form, in cluster.meta with the topic. An existing topic's
// *TopicExistsError has SameSettings only when its overrides are the
// same too.
func (c *Cluster) CreateTopicWithConfig(name string, partitions, replicationFactor int, config map[string]string) error {
	if err := topic.ValidateName(name); err != nil {
		return fmt.Errorf("cluster: create topic: %w", err)
	}
	if partitions < 1 || partitions > topic.MaxPartitionCount {
		return fmt.Errorf("cluster: create topic %q: %d partitions, want 1..%d: %w", name, partitions, topic.MaxPartitionCount, ErrInvalidPartitionCount)
	}
	overrides, err := topic.ParseConfigOverrides(config)
	if err != nil {
		return fmt.Errorf("cluster: create topic %q: %w", name, err)
	}
	if ts := c.topicStore(); ts != nil {
		return c.createTopicInStore(ts, name, partitions, replicationFactor, overrides)
	}
	cr, err := c.reserveCreation(name, partitions, replicationFactor, overrides)
	if err != nil {
		return err
	}
	if err := c.removeLeftovers(name, cr.known); err != nil {
		// Nothing was created: what is there stays as it was found.
		c.releaseCreation(name, cr, false)
		return fmt.Errorf("cluster: create topic %q: %w", name, err)
	}
	err = c.createReplicas(name, cr)
	if err == nil {
		if _, rerr := c.removeOffsets(name); rerr != nil {
			err = rerr
		}
	}
	keep := false
	if err == nil {
		if keep, err = c.commitCreation(name, cr); err == nil {
			return nil
		}
	}
	err = fmt.Errorf("cluster: create topic %q: %w", name, err)
	if rerr := c.rollBackCreation(name, cr, keep); rerr != nil {
		err = errors.Join(err, fmt.Errorf("cluster: create topic %q: roll back: %w", name, rerr))
	}
	c.releaseCreation(name, cr, false)
	return err
}

// reserveCreation decides a creation under the locks and enters its name
// in c.creating. It waits for a deletion or another creation of the name.
func (c *Cluster) reserveCreation(name string, partitions, replicationFactor int, overrides map[string]string) (*creation, error) {
	for {
		if err := c.awaitDeletion(name); err != nil {
			return nil, fmt.Errorf("cluster: create topic %q: %w", name, err)
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if c.deleting[name] != nil {
			c.mu.Unlock() // deleted again meanwhile: wait for that deletion too
			continue
		}
		if other := c.creating[name]; other != nil {
			c.mu.Unlock()
			<-other.done // then the topic exists, or the name is free again
			continue
		}
		break
	}
	defer c.mu.Unlock()
	c.files.metaMu.Lock()
	defer c.files.metaMu.Unlock()
	if t, ok := c.topics[name]; ok {
		return nil, &TopicExistsError{Topic: name, PartitionCount: len(t.parts), ReplicationFactor: t.rf,
			SameSettings: len(t.parts) == partitions && t.rf == replicationFactor && maps.Equal(c.files.meta.Topics[name].Config, overrides)}
	}
	if existing, ok := c.caseTwinLocked(name); ok {
		return nil, &TopicNameConflictError{Topic: name, Existing: existing}
	}
	tm, err := NewTopicMetadata(c.files.meta.Brokers, partitions, replicationFactor)
	if err != nil {
		return nil, fmt.Errorf("cluster: create topic %q: %w", name, err)
	}
	tm.Config = overrides
	cr := &creation{done: make(chan struct{}), logs: partitions * replicationFactor, tm: tm,
		brokers: map[int]*Broker{}, known: slices.Clone(c.files.meta.Brokers)}
	if limit := c.opts.MaxOpenLogs; limit > 0 {
		if held := c.replicaLogsLocked(); held+cr.logs > limit {
			return nil, &OpenLogsLimitError{Topic: name, Requested: cr.logs, Held: held, Limit: limit}
		}
	}
	// Every placed broker must be available before anything is created.
	for _, pm := range cr.tm.Partitions {
		for _, id := range pm.Assigned() {
			m := c.members[id]
			if m == nil || !m.b.Available() {
				return nil, fmt.Errorf("cluster: create topic %q: broker %d: %w", name, id, ErrBrokerUnavailable)
			}
			cr.brokers[id] = m.b
		}
	}
	c.creating[name] = cr
	return cr, nil
}

// caseTwinLocked returns the name of a topic, existing or being created,
// that differs from name only in letter case. c.mu must be held.
func (c *Cluster) caseTwinLocked(name string) (string, bool) {
	var twins []string
	for other := range c.topics {
		if other != name && strings.EqualFold(other, name) {
			twins = append(twins, other)
		}
	}
	for other := range c.creating {
		if other != name && strings.EqualFold(other, name) {
			twins = append(twins, other)
		}
	}
	if len(twins) == 0 {
		return "", false
	}
	slices.Sort(twins) // one answer, whatever the map order
	return twins[0], true
}

// replicaLogsLocked is the number of replica logs the cluster's topics hold
// open or may open (every assigned replica in cluster.meta, since each is
// opened on first use), plus those of the creations and growths in
// progress. c.mu and
// c.files.metaMu must be held.
func (c *Cluster) replicaLogsLocked() int {
	n := 0
	for _, t := range c.files.meta.Topics {
		for _, pm := range t.Partitions {
			n += len(pm.Replicas)
		}
	}
	for _, cr := range c.creating {
		n += cr.logs
	}
	for _, g := range c.growing {
		n += g.cr.logs
	}
	return n
}

// removeLeftovers removes what a crashed creation of name left on the
// brokers in ids: a replica directory broker-<id>/topics/<name>/ of a name
// cluster.meta does not hold (a deletion's leftovers are finished before a
// creation is reserved). Such a directory is removed only when every file
// in it is an empty regular file — what a creation writes before its
// commit point. One holding anything else is not touched, and the creation
// is refused (ErrTopicExists): those bytes are no creation's.
func (c *Cluster) removeLeftovers(name string, ids []int) error {
	for _, id := range ids {
		fsys := c.opts.Broker.FS
		if b := c.broker(id); b != nil {
			fsys = b.opts.FS
		}
		parent := filepath.Join(BrokerDir(c.root, id), brokerTopicsDir)
		dir := filepath.Join(parent, name)
		if _, err := fsys.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		if err := onlyEmptyFiles(fsys, dir); err != nil {
			return fmt.Errorf("broker %d: %w", id, err)
		}
		if err := removeEntry(fsys, parent, name); err != nil {
			return fmt.Errorf("remove %s, left by an earlier creation: %w", dir, err)
		}
	}
	return nil
}

// onlyEmptyFiles returns an error wrapping ErrTopicExists unless everything
// below dir is a directory or an empty regular file.
func onlyEmptyFiles(fsys interface {
	ReadDir(string) ([]fs.DirEntry, error)
}, dir string) error {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if err := onlyEmptyFiles(fsys, path); err != nil {
				return err
			}
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() || info.Size() != 0 {
			return fmt.Errorf("%s (%d bytes) belongs to no topic; move it away to create the topic: %w", path, info.Size(), ErrTopicExists)
		}
	}
	return nil
}

// createReplicas creates and opens every replica log of cr on its broker.
func (c *Cluster) createReplicas(name string, cr *creation) error {
	for _, pm := range cr.tm.Partitions {
		for _, id := range pm.Assigned() {
			l, err := cr.brokers[id].replica(name, pm.Partition, true)
			if err != nil {
				return err
			}
			if end := l.NextOffset(); end != 0 {
				return fmt.Errorf("broker %d already holds %d record(s) in %s: %w", id, end, l.Dir(), ErrTopicExists)
			}
		}
	}
	return nil
}

// commitCreation writes cluster.meta with the topic (under c.files.metaMu only)
// and then publishes it (under c.mu). A failed write leaves cluster.meta as
// it was (persistLocked), unless the file could not be put back: then
// inDoubt is true, cluster.meta may list the topic, and its replica files
// must stay (the next Open reads whichever the file holds; if it is not the
// topic, the next creation of the name removes them).
func (c *Cluster) commitCreation(name string, cr *creation) (inDoubt bool, err error) {
	c.mu.RLock()
	closed := c.closed
	c.mu.RUnlock()
	if closed {
		return false, ErrClosed
	}
	c.files.metaMu.Lock()
	next := c.files.meta.clone()
	next.Topics[name] = cr.tm
	err = c.files.persistLocked(next)
	inDoubt = c.files.metaFailed != nil
	c.files.metaMu.Unlock()
	if err != nil {
		return inDoubt, err
	}
	c.releaseCreation(name, cr, true)
	return false, nil
}

// releaseCreation ends cr's reservation, publishing the topic if it
// committed, and wakes the creations of the name that wait for it.
func (c *Cluster) releaseCreation(name string, cr *creation, committed bool) {
	c.mu.Lock()
	if committed {
		c.topics[name] = newTopicState(name, cr.tm)
	}
	if c.creating[name] == cr {
		delete(c.creating, name)
	}
	c.mu.Unlock()
	close(cr.done)
}

// rollBackCreation undoes what createReplicas did: the placed brokers close
// and forget every replica log of name, then every known broker's replica
// directory of name is removed and its topics/ directory fsync-ed. Only a
// name cluster.meta does not hold is rolled back, and removeLeftovers made
// sure beforehand that no directory of it held anything but empty files.
// With keepFiles (cluster.meta in doubt) the logs are closed and the
// directories stay.
func (c *Cluster) rollBackCreation(name string, cr *creation, keepFiles bool) error {
	for _, id := range sortedKeys(cr.brokers) {
		cr.brokers[id].dropTopic(name)
	}
	if keepFiles {
		return nil
	}
	var errs []error
	for _, id := range cr.known {
		fsys := c.opts.Broker.FS
		if b := cr.brokers[id]; b != nil {
			fsys = b.opts.FS
		}
		dir := filepath.Join(BrokerDir(c.root, id), brokerTopicsDir)
		if err := removeEntry(fsys, dir, name); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", filepath.Join(dir, name), err))
		}
	}
	return errors.Join(errs...)
}
