package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
)

// This file is the deletion of a topic (docs/design.md § Deleting a topic).
// The commit point is cluster.meta: once the file no longer lists the
// topic, the topic does not exist, whatever files are still on disk; what
// remains is cleanup, which the journal's intent makes sure is finished.

// DeleteTopicResult says what DeleteTopic removed.
type DeleteTopicResult struct {
	Topic             string
	PartitionCount    int
	ReplicationFactor int
	// OffsetFiles is the number of committed consumer offsets of the topic
	// that were removed (one per consumer and partition).
	OffsetFiles int
}

// DeleteTopic deletes a topic with all its records and every consumer's
// committed offsets on it. An unknown name is ErrUnknownTopic. In order:
//
//  1. Writes to the topic are stopped: DeleteTopic waits, partition by
//     partition, for the batch being written, and goes before any send
//     still queued.
//  2. The intent is journaled (EventDeleteTopic); nothing has changed yet.
//  3. cluster.meta is written without the topic. This is the commit point:
//     if the write fails, the topic is whole, the journal says failed and
//     the error is returned. From here the topic does not exist: sends,
//     reads and operations on it, also those already waiting, fail with
//     ErrUnknownTopic.
//  4. Every broker's replica directory of the topic
//     (broker-<id>/topics/<topic>/) is removed, files first, and the
//     broker's topics/ directory fsync-ed; then every consumer's offset
//     files of the topic, each directory fsync-ed.
//  5. The outcome is journaled (done).
//
// A crash before step 3 leaves the whole topic (Open writes the outcome
// rolled back); a crash after it leaves no topic, and Open finishes step 4
// before anything can use the name again, then writes completed. Either
// way Open succeeds.
//
// If step 4 fails, the topic is deleted all the same and the error (which
// wraps ErrDeleteUnfinished) says which file is left; its intent stays
// without an outcome. A CreateTopic of the name removes what is left before
// it creates anything (and fails if it still cannot), as does the next
// Open. A deleted topic's name is thus never re-created on top of its old
// records or offsets.
func (c *Cluster) DeleteTopic(name string) (DeleteTopicResult, error) {
	if ts := c.topicStore(); ts != nil {
		return c.deleteTopicInStore(ts, name)
	}
	t, err := c.topic(name)
	if err != nil {
		return DeleteTopicResult{}, err
	}
	for _, p := range t.parts {
		p.lockIdle()
	}
	locked := true
	unlock := func() {
		if locked {
			for _, p := range t.parts {
				c.unlockIdle(p)
			}
			locked = false
		}
	}
	defer unlock()

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return DeleteTopicResult{}, ErrClosed
	}
	if g, now := c.growing[name], c.topics[name]; g != nil || (now != nil && now != t && now.parts[0] == t.parts[0]) {
		// Partitions are being added, or were while this call waited
		// (the grown topic keeps the partitions): the deletion is of
		// the topic as its growth leaves it.
		c.mu.Unlock()
		unlock()
		if g != nil {
			<-g.cr.done
		}
		return c.DeleteTopic(name)
	}
	if c.topics[name] != t {
		// Deleted (and perhaps created again) while this call waited.
		c.mu.Unlock()
		return DeleteTopicResult{}, fmt.Errorf("cluster: topic %q: %w", name, ErrUnknownTopic)
	}
	d := &deletion{}
	d.mu.Lock() // nobody else knows d yet: this never waits
	defer d.mu.Unlock()
	c.files.metaMu.Lock()
	tm := c.files.meta.Topics[name]
	brokers := slices.Clone(c.files.meta.Brokers)
	res := DeleteTopicResult{Topic: name, PartitionCount: tm.PartitionCount, ReplicationFactor: tm.ReplicationFactor}
	o := c.newOp(byOperator, EventDeleteTopic, nil, 0)
	o.topic = name
	if err := o.beginPlain(describeTopic(name, tm)); err != nil {
		c.files.metaMu.Unlock()
		c.mu.Unlock()
		return DeleteTopicResult{}, fmt.Errorf("cluster: delete topic %q: %w", name, err)
	}
	next := c.files.meta.clone()
	delete(next.Topics, name)
	if err := c.files.persistLocked(next); err != nil {
		c.files.metaMu.Unlock()
		c.mu.Unlock()
		return DeleteTopicResult{}, o.fail(fmt.Errorf("cluster: delete topic %q: the topic is unchanged: %w", name, err))
	}
	c.files.metaMu.Unlock()
	// Committed. The name stays reserved in c.deleting until the files are
	// gone and the outcome is journaled.
	delete(c.topics, name)
	d.op, d.outcome, d.brokers = o, PhaseDone, brokers
	c.deleting[name] = d
	open := make([]*member, 0, len(c.members))
	for _, m := range c.members {
		open = append(open, m)
	}
	c.mu.Unlock()

	for _, p := range t.parts {
		p.deleted.Store(true)
	}
	for _, m := range open {
		m.b.dropTopic(name)
		m.forget(name)
	}
	unlock() // the sends that waited now fail with ErrUnknownTopic

	res.OffsetFiles, err = c.finishDeletionLocked(name, d)
	return res, err
}

// deletion is a topic deletion that is committed (cluster.meta no longer
// holds the topic) but not finished: its files may not all be removed, or
// its outcome not journaled. While it is in Cluster.deleting, the name
// cannot be created again.
type deletion struct {
	// mu is held by whoever removes the files: DeleteTopic, or a
	// CreateTopic of the name finishing what an earlier attempt left.
	mu sync.Mutex
	// op is the deletion's journaled operation, its intent written.
	op *op
	// outcome is the phase its outcome gets: done for DeleteTopic,
	// completed for an intent found by Open.
	outcome JournalPhase
	// brokers are the brokers whose directories may hold the topic.
	brokers []int
}

// finishDeletionLocked removes what is left of the deleted topic name and
// journals the outcome of d; only then is the name free again. It returns
// the number of offset files removed. d.mu must be held.
func (c *Cluster) finishDeletionLocked(name string, d *deletion) (int, error) {
	n, err := c.removeTopicFiles(name, d.brokers)
	if err != nil {
		return n, fmt.Errorf("cluster: delete topic %q: %w: %w", name, ErrDeleteUnfinished, err)
	}
	summary := fmt.Sprintf("%s: replica directories removed from brokers %v, %d consumer offset(s) removed", name, d.brokers, n)
	if err := d.op.outcomeOf(d.outcome, summary); err != nil {
		return n, err
	}
	c.mu.Lock()
	if c.deleting[name] == d {
		delete(c.deleting, name)
	}
	c.mu.Unlock()
	return n, nil
}

// awaitDeletion returns once no deletion of name is unfinished, finishing
// one that an earlier attempt left (it waits for a deletion in progress).
// It returns the error of a deletion that still cannot be finished.
func (c *Cluster) awaitDeletion(name string) error {
	for {
		c.mu.Lock()
		d := c.deleting[name]
		c.mu.Unlock()
		if d == nil {
			return nil
		}
		d.mu.Lock()
		c.mu.Lock()
		current := c.deleting[name] == d
		c.mu.Unlock()
		var err error
		if current {
			_, err = c.finishDeletionLocked(name, d)
		}
		d.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// reconcileDeletion gives the intent of a deletion left without an outcome
// (at off) its outcome when the cluster is opened: rolled back when
// cluster.meta still holds the topic (the process stopped before the
// commit point), completed once the topic's files are removed when it does
// not. If they cannot be removed now, the deletion stays unfinished: the
// cluster opens, and a CreateTopic of the name tries again.
func (c *Cluster) reconcileDeletion(off uint64, e JournalEntry) error {
	o := &op{c: c, cause: cause{by: ByStartup}, event: EventDeleteTopic, topic: e.Topic, intent: &off}
	c.files.metaMu.Lock()
	_, present := c.files.meta.Topics[e.Topic]
	brokers := slices.Clone(c.files.meta.Brokers)
	c.files.metaMu.Unlock()
	if present {
		return o.outcomeOf(PhaseRolledBack, "the process stopped before the change was written: "+e.Topic+" is whole")
	}
	d := &deletion{op: o, outcome: PhaseCompleted, brokers: brokers}
	d.mu.Lock()
	defer d.mu.Unlock()
	c.mu.Lock()
	c.deleting[e.Topic] = d
	c.mu.Unlock()
	if _, err := c.finishDeletionLocked(e.Topic, d); err != nil && !errors.Is(err, ErrDeleteUnfinished) {
		return err // the journal failed: Open fails, as for any other intent
	}
	return nil
}

// beginPlain writes an intent without a partition's before and after: a
// topic's deletion, a broker joining the cluster. Nothing may change before
// it returns without error.
func (o *op) beginPlain(summary string) error {
	off, err := o.append(context.Background(), o.entry(PhaseIntent, summary))
	if err != nil {
		return fmt.Errorf("nothing changed: %w", err)
	}
	o.intent = &off
	return nil
}

// outcomeOf records the outcome phase of an operation that took effect (or,
// for PhaseRolledBack, never did). A failure is reported wrapping
// ErrJournalFailed.
func (o *op) outcomeOf(phase JournalPhase, summary string) error {
	if _, err := o.append(context.Background(), o.entry(phase, summary)); err != nil {
		return fmt.Errorf("%w: %w", ErrJournalFailed, err)
	}
	return nil
}

// describeTopic is a topic's settings and placement in one phrase, for the
// journal.
func describeTopic(name string, tm TopicMetadata) string {
	return fmt.Sprintf("%s: delete %d partition(s), replication factor %d, replicas on brokers %v, and its consumer offsets",
		name, tm.PartitionCount, tm.ReplicationFactor, tm.Holders())
}

// dropTopic closes and forgets the broker's open logs of topic name, so
// that none is held while its files are removed and a topic created again
// under the name opens new ones. The topic is deleted: an error closing a
// log of it (its last fsync) concerns records that are gone, and is not
// reported.
func (b *Broker) dropTopic(name string) {
	b.mu.Lock()
	b.dropped[name] = true
	var logs []*segment.Log
	var epochs []*epochHistory
	for k, l := range b.logs {
		if k.topic == name {
			logs = append(logs, l)
			if h := b.epochs[k]; h != nil {
				epochs = append(epochs, h)
			}
			delete(b.logs, k)
			delete(b.epochs, k)
		}
	}
	b.mu.Unlock()
	for _, h := range epochs {
		h.close()
	}
	for _, l := range logs {
		_ = l.Close()
	}
}

// removeTopicFiles removes every file of topic name, as step 4 of
// DeleteTopic: the replica directory broker-<id>/topics/<name>/ of every
// broker in brokers, then every consumer's offset files
// offsets/<consumer>/<name>/*.offset. It is idempotent: whatever an
// interrupted run left, a later run removes, and it fsyncs each directory
// it may have removed from even when it finds nothing to remove (an
// interrupted run may have removed without syncing). It returns the number
// of offset files it removed.
//
// Within a replica directory nothing is fsync-ed: once the directory's
// entry is gone from topics/ and topics/ is fsync-ed, nothing below it can
// come back; until then the whole directory may come back after a power
// loss, and the next Open removes it again (its intent has no outcome yet).
//
// The offset directories themselves stay, empty: the offset store may hold
// them as created, and a topic created again under the name commits into
// them.
func (c *Cluster) removeTopicFiles(name string, brokers []int) (int, error) {
	if err := topic.ValidateName(name); err != nil {
		return 0, err // never build a path from a name that could escape
	}
	for _, id := range brokers {
		fsys := c.opts.Broker.FS
		if b := c.broker(id); b != nil {
			fsys = b.opts.FS
		}
		dir := filepath.Join(BrokerDir(c.root, id), brokerTopicsDir)
		if err := removeEntry(fsys, dir, name); err != nil {
			return 0, fmt.Errorf("remove %s: %w", filepath.Join(dir, name), err)
		}
	}
	return c.removeOffsets(name)
}

// removeEntry removes dir/name and everything below it, if it exists,
// never following a symbolic link, then fsyncs dir (if it exists).
func removeEntry(fsys durable.FS, dir, name string) error {
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the broker never held a replica
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == name {
			if err := removeTree(fsys, filepath.Join(dir, name), e.IsDir()); err != nil {
				return err
			}
			break
		}
	}
	return durable.SyncDir(fsys, dir)
}

// removeTree removes path, and first everything below it when it is a
// directory (isDir, as its parent lists it, so a symbolic link is removed,
// not followed). Nothing is fsync-ed: see removeTopicFiles.
func removeTree(fsys durable.FS, path string, isDir bool) error {
	if isDir {
		entries, err := fsys.ReadDir(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, e := range entries {
			if err := removeTree(fsys, filepath.Join(path, e.Name()), e.IsDir()); err != nil {
				return err
			}
		}
	}
	if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeOffsets removes every consumer's committed offsets of topic name
// (the files offsets/<consumer>/<name>/<partition>.offset; temp files of a
// commit in flight are left to it) and fsyncs each such directory. It
// returns the number of files removed.
func (c *Cluster) removeOffsets(name string) (int, error) {
	fsys := c.opts.FS
	root := c.OffsetsDir()
	consumers, err := fsys.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("remove offsets of %q: %w", name, err)
	}
	n := 0
	for _, ce := range consumers {
		if !ce.IsDir() || topic.ValidateName(ce.Name()) != nil {
			continue
		}
		dir := filepath.Join(root, ce.Name(), name)
		files, err := fsys.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("remove offsets of %q: %w", name, err)
		}
		for _, f := range files {
			if _, ok := client.ParseOffsetFileName(f.Name()); !ok || !f.Type().IsRegular() {
				continue
			}
			if err := fsys.Remove(filepath.Join(dir, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return n, fmt.Errorf("remove offsets of %q: %w", name, err)
			}
			n++
		}
		if err := durable.SyncDir(fsys, dir); err != nil {
			return n, fmt.Errorf("remove offsets of %q: %w", name, err)
		}
	}
	return n, nil
}
