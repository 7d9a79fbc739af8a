package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// Default timeouts of the requests between brokers: what a broker that
// stopped answering (paused, cut off by the network) can hold up. Between
// the brokers of one process no request waits on another process.
const (
	// DefaultPushTimeout bounds one write's sending to its followers: a
	// follower that does not answer in time fails the write (the records
	// stay on the leader).
	DefaultPushTimeout = 10 * time.Second
	// DefaultRequestTimeout bounds an operation's requests to other
	// brokers, and a write forwarded to its leader.
	DefaultRequestTimeout = 15 * time.Second
	// DefaultProbeTimeout bounds a question a broker must answer at once:
	// its log end, for a high watermark or a failover's candidates.
	DefaultProbeTimeout = 2 * time.Second
)

// Cluster is a set of brokers and the replicated topics placed on them. It
// is the one place that decides: who leads each partition, which replicas are
// active, when a write is acknowledged, and when leadership changes. Every
// such decision is committed to the metadata store before it is reported.
//
// A Cluster opened with Open hosts every broker in one process (phases 4
// and 5): its metadata store is cluster.meta, the journal file and the
// offset files under its root, and its brokers reach each other by
// function calls. In cluster mode (NewMember) a Cluster hosts one broker,
// its process's, over a metadata store replicated by Raft and a transport
// between processes; the replication core — the write path, the
// follower's side, catch-up, recovery, failover, leader moves, retention —
// is the same code in both (docs/phase-7-processes.md).
//
// A Cluster is safe for concurrent use. Writes to one partition are
// group-committed (see Producer); failover, recovery and catch-up on a
// partition wait for its writes in flight and exclude new ones while they
// run.
//
// Lock order: partition.mu, then deletion.mu, then Cluster.mu, then the
// store's own lock.
type Cluster struct {
	root string
	opts Options

	// store keeps the metadata, the offsets and the journal; files is the
	// same store in one process (nil in cluster mode).
	store MetaStore
	files *fileStore
	// transport reaches the brokers, this process's included.
	transport Transport
	// observer tells what this process cannot see for itself: the
	// brokers it does not host (nil in one process, which hosts them all).
	observer Observer
	// localID is the one broker a process of cluster mode hosts; 0 in one
	// process, which hosts every broker.
	localID int
	// createMissing: a replica assigned to a hosted broker is created
	// when first used (cluster mode: a process that lost its data
	// directory rebuilds it from its leaders). In one process a missing
	// replica is damage (ErrReplicaMissing): replicas are created only
	// with their topic.
	createMissing bool
	// Timeouts of the requests between brokers.
	pushTimeout, requestTimeout, probeTimeout time.Duration
	// statusWait bounds a status's question to a partition's leader in
	// another process (MemberConfig.StatusWait).
	statusWait time.Duration
	// follow is the loop that follows the metadata in cluster mode
	// (process.go); nil in one process.
	follow *follower
	// awaitTopic is how long a topic this process's copy of the metadata
	// does not know is waited for (cluster mode: one created through
	// another process a moment ago); zero in one process.
	awaitTopic time.Duration

	// mu guards members, topics, closed, deleting, creating and growing.
	mu sync.RWMutex
	// members are the hosted brokers by id (open or closed).
	members map[int]*member
	// topics are the replicated topics by name, as far as they were used.
	topics map[string]*topicState
	// closed is set by Close.
	closed bool
	// deleting holds, by name, the topic deletions that are committed but
	// not finished (delete.go); such a name cannot be created again yet.
	deleting map[string]*deletion
	// creating holds, by name, the topic creations that reserved their
	// name and are doing their file I/O without the lock (create.go).
	creating map[string]*creation
	// growing holds, by name, the topics whose partitions are being added
	// to (grow.go): a second growth, and a deletion, of the topic wait.
	growing map[string]*growth

	// producerIDs is the block of producer ids this process hands out
	// from (producerids.go); it has its own lock.
	producerIDs *producerIDs
	// txnLocks serialises the transaction coordinator's requests of each
	// transactional id (transactions.go); it has its own lock.
	txnLocks txnLocks
	// writers are the goroutines that write the partitions' queues
	// (writers.go).
	writers writers
	// syncs is the sync group the hosted brokers' appends share
	// (syncs.go); nil when Options.Broker.Sync was given.
	syncs *durable.SyncGroup
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
	files := newFileStore(abs, opts.FS, log.Options{FS: opts.FS, Now: opts.Broker.Now})
	c := newCore(abs, opts, files)
	c.files = files
	c.transport = localTransport{c}
	path := c.MetaPath()
	m, version, found, err := readClusterMeta(opts.FS, path)
	switch {
	case err != nil:
		return nil, err
	case !found:
		files.meta = Metadata{Brokers: []int{}, Topics: map[string]TopicMetadata{}}
	default:
		files.meta = m
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
		files.metaMu.Lock()
		err := files.persistLocked(m)
		files.metaMu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("cluster: open %s: upgrade %s from version %d: %w", root, MetaFileName, version, err)
		}
	}
	for name, t := range files.meta.Topics {
		c.topics[name] = newTopicState(name, t)
	}
	if err := c.takeHWCheckpoint(); err != nil {
		return nil, errors.Join(fmt.Errorf("cluster: open %s: %w", root, err), files.close())
	}
	if err := c.reconcileJournal(); err != nil {
		return nil, errors.Join(fmt.Errorf("cluster: open %s: %w", root, err), files.close())
	}
	if err := c.openSyncs(); err != nil {
		return nil, errors.Join(err, files.close())
	}
	return c, nil
}

// newCore is a Cluster over store with no broker registered yet.
func newCore(root string, opts Options, store MetaStore) *Cluster {
	return &Cluster{root: root, opts: opts, store: store, members: map[int]*member{}, topics: map[string]*topicState{},
		deleting: map[string]*deletion{}, creating: map[string]*creation{}, growing: map[string]*growth{}, producerIDs: newProducerIDs(), writers: newWriters(),
		pushTimeout: DefaultPushTimeout, requestTimeout: DefaultRequestTimeout, probeTimeout: DefaultProbeTimeout, statusWait: defaultStatusWait}
}

// MetadataCurrent reports whether this process's copy of the metadata is
// known to be current. In one process it always is (cluster.meta is read
// whole at Open). A process of cluster mode that starts replays its copy
// from Raft first: until its own registration is applied, it could answer
// that a topic or an offset does not exist when it does, so its protocols
// answer "not ready, try again" instead (ErrNotReady).
func (c *Cluster) MetadataCurrent() bool { return c.store.Ready() }

// MetadataChanged returns a channel that the next change of the metadata
// closes: a commit of this process's, or, in cluster mode, one another
// process made, applied here.
func (c *Cluster) MetadataChanged() <-chan struct{} { return c.store.Changed() }

// Root is the cluster's root directory (absolute).
func (c *Cluster) Root() string { return c.root }

// MetaPath is the cluster.meta file.
func (c *Cluster) MetaPath() string { return filepath.Join(c.root, MetaFileName) }

// OffsetsDir is where cluster consumers keep committed offsets:
// <root>/offsets.
func (c *Cluster) OffsetsDir() string { return filepath.Join(c.root, "offsets") }

// Metadata returns a copy of the metadata: what cluster.meta holds, in one
// process.
func (c *Cluster) Metadata() Metadata {
	var m Metadata
	c.store.Read(func(s *MetaState) { m = s.Meta.clone() })
	return m
}

// Close closes every hosted broker; the cluster refuses every operation
// afterwards. The metadata needs no flushing: it was committed at every
// change. Before the brokers close, the high watermark of every partition
// this process leads is written to hw.checkpoint, from which the next Open
// starts (docs/design.md § High watermark); a failure to write it is
// returned, and the next Open then starts as after a crash. Closing twice
// is harmless.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.writers.done)
	members := maps.Clone(c.members)
	topics := maps.Clone(c.topics)
	c.mu.Unlock()
	c.stopFollowing()
	var errs []error
	if c.files != nil {
		// In cluster mode the metadata may move on while the process is
		// down (a topic deleted and created again): a watermark it
		// recorded could speak for another topic. Its leaders find theirs
		// again from their followers' log ends.
		errs = append(errs, c.writeHWCheckpoint(topics))
	}
	for _, id := range sortedKeys(members) {
		c.snapshotProducersAtClose(members[id])
		errs = append(errs, members[id].b.Close())
	}
	if c.files != nil {
		errs = append(errs, c.files.close())
	}
	errs = append(errs, c.closeSyncs())
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
	if c.files == nil {
		return fmt.Errorf("cluster: register broker %d: %w", b.id, ErrBrokerIsProcess)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if old, ok := c.members[b.id]; ok && old.b != b && old.b.Available() {
		return fmt.Errorf("cluster: register broker %d: %w", b.id, ErrBrokerRegistered)
	}
	f := c.files
	if !f.knownBroker(b.id) {
		f.metaMu.Lock()
		next := f.meta.clone()
		next.Brokers = append(next.Brokers, b.id)
		slices.Sort(next.Brokers)
		// A new broker changes cluster.meta: journaled like every change,
		// the intent first.
		o := c.newOp(byOperator, EventBrokerStart, nil, b.id)
		if err := o.beginPlain(fmt.Sprintf("broker %d joins the cluster: cluster.meta lists brokers %v", b.id, next.Brokers)); err != nil {
			f.metaMu.Unlock()
			return fmt.Errorf("cluster: register broker %d: %w", b.id, err)
		}
		err := f.persistLocked(next)
		f.metaMu.Unlock()
		if err != nil {
			return o.fail(fmt.Errorf("cluster: register broker %d: %w", b.id, err))
		}
		f.signal()
		// cluster.meta lists the broker now: it is registered whatever
		// the journal's outcome entry does (Open adds a missing one).
		c.members[b.id] = newMember(c, b)
		return o.done(fmt.Sprintf("broker %d joined the cluster", b.id))
	}
	c.members[b.id] = newMember(c, b)
	return nil
}

// StartBroker opens a new Broker instance for id at the cluster's root and
// registers it: how a stopped broker comes back.
// The start is added to the journal.
//
// A start also reopens the cluster journal if a write to it failed (a full
// disk): the start's own entry needs it, and the reopen reads the journal
// from disk as ReopenBroker does.
//
// In cluster mode a broker is a process: it is started and stopped as one
// (ErrBrokerIsProcess).
func (c *Cluster) StartBroker(id int) (*Broker, error) {
	if c.files == nil {
		return nil, fmt.Errorf("cluster: start broker %d: start its process instead: %w", id, ErrBrokerIsProcess)
	}
	if b := c.broker(id); b != nil && b.Available() {
		return nil, fmt.Errorf("cluster: start broker %d: %w", id, ErrBrokerRegistered)
	}
	if _, err := c.files.journal.reopenFailed(); err != nil {
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
//
// In cluster mode a broker is a process: it is started and stopped as one
// (ErrBrokerIsProcess).
func (c *Cluster) StopBroker(id int) error {
	if c.files == nil {
		return fmt.Errorf("cluster: stop broker %d: stop its process instead: %w", id, ErrBrokerIsProcess)
	}
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
	// Available is true while an open instance is registered (in cluster
	// mode: while its heartbeats arrive).
	Available bool
	// DownSince is when an unavailable broker was last known to be up,
	// when its observer knows (in cluster mode: its last heartbeat);
	// zero otherwise, and the controller counts from when it first saw
	// the broker down.
	DownSince time.Time
}

// Brokers lists every known broker, ascending by id: in one process, the
// brokers of cluster.meta, each available while an open instance is
// registered; in cluster mode, the registered processes, each available
// while its heartbeats arrive, as the controller sees them.
func (c *Cluster) Brokers() []BrokerInfo {
	var ids []int
	c.store.Read(func(s *MetaState) { ids = slices.Clone(s.Meta.Brokers) })
	out := make([]BrokerInfo, len(ids))
	for i, id := range ids {
		out[i] = c.brokerInfo(id)
	}
	return out
}

// brokerInfo is what is known of broker id: directly when this process
// hosts it, from the observer otherwise.
func (c *Cluster) brokerInfo(id int) BrokerInfo {
	if c.observer != nil {
		return c.observer.Broker(id)
	}
	b := c.broker(id)
	return BrokerInfo{ID: id, Available: b != nil && b.Available()}
}

// hosts reports whether broker id runs in this process: every broker in
// one process, the process's own in cluster mode.
func (c *Cluster) hosts(id int) bool { return c.localID == 0 || id == c.localID }

// hosted returns the member of broker id, which must run in this process,
// open; an error wrapping ErrBrokerUnavailable otherwise.
func (c *Cluster) hosted(id int) (*member, error) {
	if !c.hosts(id) {
		return nil, fmt.Errorf("cluster: broker %d does not run in this process: %w", id, ErrBrokerUnavailable)
	}
	c.mu.RLock()
	m := c.members[id]
	c.mu.RUnlock()
	if m == nil {
		return nil, fmt.Errorf("cluster: broker %d: not registered: %w", id, ErrBrokerUnavailable)
	}
	if !m.b.Available() {
		return nil, fmt.Errorf("cluster: broker %d: %w", id, ErrBrokerUnavailable)
	}
	return m, nil
}

// broker returns the registered instance of id, or nil.
func (c *Cluster) broker(id int) *Broker {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if m := c.members[id]; m != nil {
		return m.b
	}
	return nil
}

func (c *Cluster) knownBroker(id int) bool {
	known := false
	c.store.Read(func(s *MetaState) { _, known = slices.BinarySearch(s.Meta.Brokers, id) })
	return known
}

// usable reports whether broker id's replica of p could lead now: its
// broker answers, and its log can be opened. A broker of another process
// that the heartbeats show down is not usable; one they show up is asked
// (a probe that waits at most the probe timeout).
func (c *Cluster) usable(p *partition, id int) bool {
	if c.hosts(id) {
		m, err := c.hosted(id)
		if err != nil {
			return false
		}
		_, err = m.b.replica(p.topic, p.index, c.createMissing)
		return err == nil
	}
	if !c.observer.Broker(id).Available {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.probeTimeout)
	defer cancel()
	_, err := c.transport.Records(ctx, id, RecordsRequest{Topic: p.topic, Partition: p.index})
	return err == nil
}

// TopicInfo describes one replicated topic.
type TopicInfo struct {
	Name              string
	PartitionCount    int
	ReplicationFactor int
}

// Topics lists the cluster's topics by name.
func (c *Cluster) Topics() []TopicInfo {
	var out []TopicInfo
	c.store.Read(func(s *MetaState) {
		for name, t := range s.Meta.Topics {
			out = append(out, TopicInfo{Name: name, PartitionCount: len(t.Partitions), ReplicationFactor: t.ReplicationFactor})
		}
	})
	slices.SortFunc(out, func(a, b TopicInfo) int { return strings.Compare(a.Name, b.Name) })
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

// topic returns a topic's state, made from the metadata on first use. A
// topic the metadata no longer holds is deleted: its state is marked so,
// and forgotten.
func (c *Cluster) topic(name string) (*topicState, error) {
	c.mu.RLock()
	closed, t := c.closed, c.topics[name]
	c.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	var tm TopicMetadata
	var ok bool
	c.store.Read(func(s *MetaState) { tm, ok = s.Meta.Topics[name] })
	if !ok && t == nil && c.awaitTopic > 0 {
		tm, ok = c.waitTopic(name)
	}
	switch {
	case ok && t != nil && len(tm.Partitions) <= len(t.parts):
		return t, nil
	case !ok:
		if t != nil {
			c.forgetTopic(name, t)
		}
		return nil, fmt.Errorf("cluster: topic %q: %w", name, ErrUnknownTopic)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch t = c.topics[name]; {
	case t == nil:
		t = newTopicState(name, tm)
		c.topics[name] = t
	case len(tm.Partitions) > len(t.parts):
		// Partitions were added (AddPartitions, perhaps through another
		// process): the topic grows, its partitions kept.
		t = t.grown(tm)
		c.topics[name] = t
	}
	return t, nil
}

// waitTopic waits up to c.awaitTopic for the metadata to hold topic name.
func (c *Cluster) waitTopic(name string) (tm TopicMetadata, ok bool) {
	t := time.NewTimer(c.awaitTopic)
	defer t.Stop()
	for {
		ch := c.store.Changed()
		c.store.Read(func(s *MetaState) { tm, ok = s.Meta.Topics[name] })
		if ok {
			return tm, true
		}
		select {
		case <-ch:
		case <-t.C:
			return tm, false
		}
	}
}

// forgetTopic marks a deleted topic's state deleted, which fails the sends
// still queued on it, and forgets it.
func (c *Cluster) forgetTopic(name string, t *topicState) {
	for _, p := range t.parts {
		p.deleted.Store(true)
	}
	c.mu.Lock()
	if c.topics[name] == t {
		delete(c.topics, name)
	}
	c.mu.Unlock()
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

// logf tells the broker options' logger, if any, what happened.
func (c *Cluster) logf(format string, args ...any) {
	if c.opts.Broker.Logf != nil {
		c.opts.Broker.Logf(format, args...)
	}
}
