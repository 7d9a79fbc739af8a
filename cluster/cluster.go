package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// Cluster is a set of brokers and the replicated topics placed on them. It
// is the one place that decides: who leads each partition, which replicas are
// active, when a write is acknowledged, and when leadership changes. Every
// such decision is written to cluster.meta before it is reported.
//
// A Cluster is safe for concurrent use. Writes to one partition are
// group-committed (see Producer); failover, recovery and catch-up on a
// partition wait for its writes in flight and exclude new ones while they
// run.
//
// Lock order: partition.mu, then deletion.mu, then Cluster.mu, then
// Cluster.metaMu.
type Cluster struct {
	root string
	opts Options

	// mu guards brokers, topics, closed, offsets, deleting and creating.
	mu sync.RWMutex
	// brokers are the registered broker instances by id (open or closed).
	brokers map[int]*Broker
	// topics are the replicated topics by name.
	topics map[string]*topicState
	// closed is set by Close.
	closed bool
	// offsets is the consumer offset store, opened on first use.
	offsets *client.OffsetStore
	// deleting holds, by name, the topic deletions that are committed but
	// not finished (delete.go); such a name cannot be created again yet.
	deleting map[string]*deletion
	// creating holds, by name, the topic creations that reserved their
	// name and are doing their file I/O without the lock (create.go).
	creating map[string]*creation

	// metaMu guards meta and metaFailed and serialises writes of
	// cluster.meta.
	metaMu sync.Mutex
	// meta is exactly what cluster.meta holds.
	meta Metadata
	// metaFailed, once set, is why cluster.meta may no longer hold meta;
	// every later change is refused until the cluster is reopened.
	metaFailed error

	// journal records every operation (docs/design.md § The journal).
	journal *journal
}

// Open opens the cluster rooted at root, creating the directory if needed.
// An existing cluster.meta is fully validated and its topics, placement,
// leaders and active sets restored; a malformed one is reported as a
// *MetadataError and left untouched. No broker is registered by Open:
// register them (RegisterBroker or StartBroker) before using their
// replicas.
func Open(root string) (*Cluster, error) {
	return OpenWithOptions(root, Options{})
}

// OpenWithOptions is Open with explicit options.
func OpenWithOptions(root string, opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	if err := opts.TopicDefaults.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: open %s: topic defaults: %w", root, err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("cluster: open %s: %w", root, err)
	}
	if _, err := durable.MkdirAll(opts.FS, abs); err != nil {
		return nil, fmt.Errorf("cluster: open %s: %w", root, err)
	}
	c := &Cluster{root: abs, opts: opts, brokers: map[int]*Broker{}, topics: map[string]*topicState{}, deleting: map[string]*deletion{}, creating: map[string]*creation{},
		journal: &journal{root: abs, opts: log.Options{FS: opts.FS, Now: opts.Broker.Now}}}
	path := c.MetaPath()
	m, version, found, err := readClusterMeta(opts.FS, path)
	switch {
	case err != nil:
		return nil, err
	case !found:
		c.meta = Metadata{Brokers: []int{}, Topics: map[string]TopicMetadata{}}
	default:
		c.meta = m
		// The process that wrote cluster.meta may have died after the
		// rename but before the directory fsync; this process acts on
		// what it read, so the entry must be durable first.
		if err := durable.SyncDir(opts.FS, abs); err != nil {
			return nil, fmt.Errorf("cluster: open %s: %w", root, err)
		}
	}
	if err := durable.RemoveTemp(opts.FS, path); err != nil {
		return nil, fmt.Errorf("cluster: open %s: %w", root, err)
	}
	if found && version != MetaVersion {
		// An older file is rewritten in today's format before anything
		// acts on it, by the same atomic replace as every change: a crash
		// leaves the old file or the new one, and both read the same.
		if err := c.persistLocked(m); err != nil {
			return nil, fmt.Errorf("cluster: open %s: upgrade %s from version %d: %w", root, MetaFileName, version, err)
		}
	}
	for name, t := range c.meta.Topics {
		c.topics[name] = newTopicState(name, t)
	}
	if err := c.takeHWCheckpoint(); err != nil {
		return nil, errors.Join(fmt.Errorf("cluster: open %s: %w", root, err), c.journal.close())
	}
	if err := c.reconcileJournal(); err != nil {
		return nil, errors.Join(fmt.Errorf("cluster: open %s: %w", root, err), c.journal.close())
	}
	return c, nil
}

// Root is the cluster's root directory (absolute).
func (c *Cluster) Root() string { return c.root }

// MetaPath is the cluster.meta file.
func (c *Cluster) MetaPath() string { return filepath.Join(c.root, MetaFileName) }

// OffsetsDir is where cluster consumers keep committed offsets:
// <root>/offsets.
func (c *Cluster) OffsetsDir() string { return filepath.Join(c.root, "offsets") }

// Metadata returns a copy of what cluster.meta holds.
func (c *Cluster) Metadata() Metadata {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	return c.meta.clone()
}

// Close closes every registered broker; the cluster refuses every operation
// afterwards. cluster.meta needs no flushing: it was written at every
// change. Before the brokers close, every partition's high watermark is
// written to hw.checkpoint, from which the next Open starts
// (docs/design.md § High watermark); a failure to write it is returned, and
// the next Open then starts as after a crash. Closing twice is harmless.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	brokers := c.brokers
	topics := maps.Clone(c.topics)
	c.mu.Unlock()
	errs := []error{c.writeHWCheckpoint(topics)}
	for _, id := range sortedKeys(brokers) {
		errs = append(errs, brokers[id].Close())
	}
	errs = append(errs, c.journal.close())
	return errors.Join(errs...)
}

// RegisterBroker hands an open broker to the cluster, which closes it on
// Close. The broker must live under the cluster's root. A broker id the
// cluster has never seen is added to cluster.meta (written before
// RegisterBroker returns); it takes part in the placement of topics created
// later, never of existing ones. A new instance with a known id replaces a
// closed one, making that broker available again; registering while an open
// instance with the id is registered is an error (ErrBrokerRegistered).
//
// A returning broker's replicas are not trusted back automatically: an
// active follower may need CatchUp, and an inactive replica RecoverReplica.
func (c *Cluster) RegisterBroker(b *Broker) error {
	if b == nil {
		return fmt.Errorf("cluster: register nil broker: %w", ErrInvalidArgument)
	}
	if !b.Available() {
		return fmt.Errorf("cluster: register broker %d: closed instance: %w", b.id, ErrBrokerUnavailable)
	}
	if b.root != c.root {
		return fmt.Errorf("cluster: register broker %d: root %s, cluster root %s: %w", b.id, b.root, c.root, ErrBrokerRoot)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if old, ok := c.brokers[b.id]; ok && old != b && old.Available() {
		return fmt.Errorf("cluster: register broker %d: %w", b.id, ErrBrokerRegistered)
	}
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	if _, known := slices.BinarySearch(c.meta.Brokers, b.id); !known {
		next := c.meta.clone()
		next.Brokers = append(next.Brokers, b.id)
		slices.Sort(next.Brokers)
		// A new broker changes cluster.meta: journaled like every change,
		// the intent first.
		o := c.newOp(byOperator, EventBrokerStart, nil, b.id)
		if err := o.beginPlain(fmt.Sprintf("broker %d joins the cluster: cluster.meta lists brokers %v", b.id, next.Brokers)); err != nil {
			return fmt.Errorf("cluster: register broker %d: %w", b.id, err)
		}
		if err := c.persistLocked(next); err != nil {
			return o.fail(fmt.Errorf("cluster: register broker %d: %w", b.id, err))
		}
		// cluster.meta lists the broker now: it is registered whatever
		// the journal's outcome entry does (Open adds a missing one).
		c.brokers[b.id] = b
		return o.done(fmt.Sprintf("broker %d joined the cluster", b.id))
	}
	c.brokers[b.id] = b
	return nil
}

// StartBroker opens a new Broker instance for id at the cluster's root and
// registers it: how a stopped broker comes back.
// The start is added to the journal.
//
// A start also reopens the cluster journal if a write to it failed (a full
// disk): the start's own entry needs it, and the reopen reads the journal
// from disk as ReopenBroker does.
func (c *Cluster) StartBroker(id int) (*Broker, error) {
	if b := c.broker(id); b != nil && b.Available() {
		return nil, fmt.Errorf("cluster: start broker %d: %w", id, ErrBrokerRegistered)
	}
	if _, err := c.journal.reopenFailed(); err != nil {
		return nil, fmt.Errorf("cluster: start broker %d: %w", id, err)
	}
	bopts := c.opts.Broker
	if bopts.TopicConfig == nil {
		bopts.TopicConfig = c.TopicConfig
	}
	b, err := OpenBrokerWithOptions(id, c.root, bopts)
	if err != nil {
		return nil, err
	}
	joins := !c.knownBroker(id)
	if err := c.RegisterBroker(b); errors.Is(err, ErrJournalFailed) {
		return b, err // registered; only its journal entry is missing
	} else if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	if joins {
		return b, nil // the join's intent and outcome are its journal entries
	}
	return b, c.newOp(byOperator, EventBrokerStart, nil, id).done(fmt.Sprintf("broker %d started", id))
}

// StopBroker closes the registered instance of broker id, making it
// unavailable, as if its machine had failed. Nothing else happens: no
// failover, no change to cluster.meta; the stop is added to the journal.
// Stopping a stopped broker is harmless (and not journaled again).
func (c *Cluster) StopBroker(id int) error {
	if id < 1 {
		return fmt.Errorf("cluster: stop broker %d: %w", id, ErrInvalidBrokerID)
	}
	b := c.broker(id)
	if b == nil {
		if c.knownBroker(id) {
			return nil
		}
		return fmt.Errorf("cluster: stop broker %d: %w", id, ErrUnknownBroker)
	}
	if !b.Available() {
		return nil
	}
	if err := b.Close(); err != nil {
		return err
	}
	return c.newOp(byOperator, EventBrokerStop, nil, id).done(fmt.Sprintf("broker %d stopped", id))
}

// BrokerInfo describes one known broker.
type BrokerInfo struct {
	ID int
	// Available is true while an open instance is registered.
	Available bool
	// DownSince is when an unavailable broker was last known to be up,
	// when its observer knows (in cluster mode: its last heartbeat);
	// zero otherwise, and the controller counts from when it first saw
	// the broker down.
	DownSince time.Time
}

// Brokers lists every broker in cluster.meta, ascending by id.
func (c *Cluster) Brokers() []BrokerInfo {
	c.metaMu.Lock()
	ids := slices.Clone(c.meta.Brokers)
	c.metaMu.Unlock()
	out := make([]BrokerInfo, len(ids))
	for i, id := range ids {
		b := c.broker(id)
		out[i] = BrokerInfo{ID: id, Available: b != nil && b.Available()}
	}
	return out
}

// broker returns the registered instance of id, or nil.
func (c *Cluster) broker(id int) *Broker {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.brokers[id]
}

func (c *Cluster) knownBroker(id int) bool {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	_, ok := slices.BinarySearch(c.meta.Brokers, id)
	return ok
}

// persistLocked writes next as cluster.meta and, only if that succeeded,
// makes it the cluster's persisted metadata. c.metaMu must be held.
//
// A write can fail after its rename (only the directory fsync left), with
// next already in the file. Memory keeps the old metadata, so the file is
// then put back to it: a failed change is undone on disk too, and can be
// retried. If the file cannot be shown to hold the old content, every later
// change is refused (ErrMetadataFailed) until the cluster is reopened.
func (c *Cluster) persistLocked(next Metadata) error {
	if c.metaFailed != nil {
		return fmt.Errorf("%w: %w", ErrMetadataFailed, c.metaFailed)
	}
	data, err := EncodeClusterMeta(next)
	if err != nil {
		return err
	}
	err = durable.WriteFile(c.opts.FS, c.MetaPath(), data)
	if err == nil {
		c.meta = next
		return nil
	}
	err = fmt.Errorf("cluster: write %s: %w", c.MetaPath(), err)
	if rerr := c.restoreMetaLocked(); rerr != nil {
		c.metaFailed = errors.Join(err, rerr)
		return c.metaFailed
	}
	return err
}

// restoreMetaLocked makes sure cluster.meta holds c.meta after a failed
// write, rewriting it if it does not. c.metaMu must be held.
func (c *Cluster) restoreMetaLocked() error {
	old, err := EncodeClusterMeta(c.meta)
	if err != nil {
		return err
	}
	onDisk, err := durable.ReadFile(c.opts.FS, c.MetaPath())
	if err == nil && bytes.Equal(onDisk, old) {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) && len(c.meta.Topics) == 0 && len(c.meta.Brokers) == 0 {
		return nil // never written: nothing to restore
	}
	if err := durable.WriteFile(c.opts.FS, c.MetaPath(), old); err != nil {
		return fmt.Errorf("cluster: restore %s after a failed write: %w", c.MetaPath(), err)
	}
	return nil
}

// setPartition persists a new leadership and active set for one partition.
// On error neither cluster.meta nor the persisted copy changed.
func (c *Cluster) setPartition(topicName string, pm PartitionMetadata) error {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	next := c.meta.clone()
	t, ok := next.Topics[topicName]
	if !ok || pm.Partition < 0 || pm.Partition >= len(t.Partitions) {
		return fmt.Errorf("cluster: %s/%d: %w", topicName, pm.Partition, ErrUnknownTopic)
	}
	t.Partitions[pm.Partition] = pm
	return c.persistLocked(next)
}

// TopicInfo describes one replicated topic.
type TopicInfo struct {
	Name              string
	PartitionCount    int
	ReplicationFactor int
}

// Topics lists the cluster's topics by name.
func (c *Cluster) Topics() []TopicInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]TopicInfo, 0, len(c.topics))
	for _, t := range c.topics {
		out = append(out, t.info())
	}
	slices.SortFunc(out, func(a, b TopicInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Topic describes one topic; an unknown name is ErrUnknownTopic.
func (c *Cluster) Topic(name string) (TopicInfo, error) {
	t, err := c.topic(name)
	if err != nil {
		return TopicInfo{}, err
	}
	return t.info(), nil
}

func (c *Cluster) topic(name string) (*topicState, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, ErrClosed
	}
	t, ok := c.topics[name]
	if !ok {
		return nil, fmt.Errorf("cluster: topic %q: %w", name, ErrUnknownTopic)
	}
	return t, nil
}

// partition returns one partition's state.
func (c *Cluster) partition(topicName string, p int) (*partition, error) {
	t, err := c.topic(topicName)
	if err != nil {
		return nil, err
	}
	if p < 0 || p >= len(t.parts) {
		return nil, fmt.Errorf("cluster: topic %q has %d partition(s), no partition %d: %w", topicName, len(t.parts), p, topic.ErrPartitionOutOfRange)
	}
	return t.parts[p], nil
}
