package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// This file is a Cluster in cluster mode: one process of a cluster of
// processes, hosting its own broker, over a metadata store every process
// shares (Raft) and a transport between processes. It is the same Cluster
// as in one process — the same write path, follower, catch-up, recovery,
// failover, leader moves, retention — with three things its wiring gives
// it: the store, the transport and an Observer of the other brokers.

// MemberConfig is what a process of cluster mode gives NewMember.
type MemberConfig struct {
	// ID is the broker this process is.
	ID int
	// Root is the process's data directory; its broker owns
	// broker-<ID>/ inside it (BrokerDir), as a broker of one process does.
	Root string
	// Store is the metadata every process shares. It must implement
	// TopicStore too: topics are created, changed and deleted by a command
	// each, every process creating and removing its own replicas' files as
	// it learns of them.
	Store MetaStore
	// Transport reaches every broker, this one included.
	Transport Transport
	// Observer tells which brokers are up and what they last reported.
	Observer Observer
	// StatusWait bounds how long a partition's status waits for its
	// leader's own answer (its log end and high watermark as of now)
	// before it falls back on the leader's last report, and how long a
	// leader's high-watermark refresh waits for a follower's log end;
	// zero is 1 s. A broker that is paused or whose link holds its bytes
	// answers nothing, and the controller reads every status on each
	// pass: the node sets it to its heartbeat window, past which the
	// silent broker counts down and is not asked.
	StatusWait time.Duration
	// Options tune the Cluster as Open's do. CatchUpOnWrite is always on:
	// between processes a follower that missed a write is brought level
	// by the next one.
	Options Options
}

// TopicStore is what a MetaStore of cluster mode adds: the topics'
// creation, growth, configuration and deletion, each one command.
type TopicStore interface {
	// CreateTopic places a topic over the registered brokers
	// (OpCreateTopic). The refusals are MetaState.Apply's.
	CreateTopic(ctx context.Context, name string, partitions, replicationFactor int, config map[string]string) error
	// AddPartitions grows a topic to partitions partitions
	// (OpAddPartitions). The refusals are MetaState.Apply's.
	AddPartitions(ctx context.Context, name string, partitions int) error
	// AlterTopicConfig changes a topic's overrides (OpAlterConfig).
	AlterTopicConfig(ctx context.Context, name string, set map[string]string, remove []string) error
	// DeleteTopic deletes a topic and its consumer offsets
	// (OpDeleteTopic) and returns how many offsets it dropped.
	DeleteTopic(ctx context.Context, name string) (offsets int, err error)
	// TopicFilesRemoved says that broker removed the files of the deleted
	// topic name (OpTopicFilesRemoved).
	TopicFilesRemoved(ctx context.Context, name string, broker int) error
}

// NewMember opens the broker of one process of cluster mode and the
// Cluster that serves it. From then on the Cluster follows the metadata on
// its own: it forgets deleted topics and removes its broker's files of
// them, and gives open logs a changed segment.bytes or segment.ms. Close
// stops it and closes the broker.
func NewMember(cfg MemberConfig) (*Cluster, error) {
	switch {
	case cfg.ID < 1:
		return nil, fmt.Errorf("cluster: member %d: %w", cfg.ID, ErrInvalidBrokerID)
	case cfg.Store == nil || cfg.Transport == nil || cfg.Observer == nil:
		return nil, fmt.Errorf("cluster: member %d: a store, a transport and an observer are needed: %w", cfg.ID, ErrInvalidArgument)
	}
	if _, ok := cfg.Store.(TopicStore); !ok {
		return nil, fmt.Errorf("cluster: member %d: the store keeps no topics (TopicStore): %w", cfg.ID, ErrInvalidArgument)
	}
	opts := cfg.Options.withDefaults()
	opts.CatchUpOnWrite = true
	if err := opts.TopicDefaults.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: member %d: topic defaults: %w", cfg.ID, err)
	}
	abs, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("cluster: member %d: %w", cfg.ID, err)
	}
	c := newCore(abs, opts, cfg.Store)
	c.transport, c.observer, c.localID, c.createMissing = cfg.Transport, cfg.Observer, cfg.ID, true
	if cfg.StatusWait > 0 {
		c.statusWait = cfg.StatusWait
	}
	c.awaitTopic = awaitTopic
	if _, err := durable.MkdirAll(opts.Broker.FS, abs); err != nil {
		return nil, fmt.Errorf("cluster: member %d: %w", cfg.ID, err)
	}
	if err := c.openSyncs(); err != nil {
		return nil, err
	}
	bopts := c.opts.Broker
	if bopts.TopicConfig == nil {
		bopts.TopicConfig = c.TopicConfig
	}
	b, err := OpenBrokerWithOptions(cfg.ID, abs, bopts)
	if err != nil {
		return nil, errors.Join(err, c.closeSyncs())
	}
	c.members[cfg.ID] = newMember(c, b)
	c.follow = &follower{stop: make(chan struct{}), done: make(chan struct{}), applied: map[string]topic.Config{}, removing: map[string]bool{}}
	go c.followMetadata()
	return c, nil
}

// follower is the loop of a Cluster of cluster mode that follows the
// metadata (followMetadata).
type follower struct {
	stop, done chan struct{}
	once       sync.Once
	// mu guards applied, each topic's configuration as last given to
	// its open logs, and removing, the deleted topics whose files a
	// catchUpWithMetadata is removing now. It is never held across a
	// call to the store that waits for the metadata group.
	mu       sync.Mutex
	applied  map[string]topic.Config
	removing map[string]bool
}

// awaitTopic is how long a process of cluster mode waits for a topic its
// copy of the metadata does not know yet: a client that created a topic
// through one process and writes through another at once finds it,
// rather than an unknown topic from a copy a few milliseconds behind.
const awaitTopic = 500 * time.Millisecond

// followEvery is how often followMetadata looks again when nothing changed
// (a removal of files that failed is tried again then).
const followEvery = time.Second

// followMetadata runs until Close: at every change of the metadata it
// brings the process's own state in line with it.
func (c *Cluster) followMetadata() {
	defer close(c.follow.done)
	t := time.NewTicker(followEvery)
	defer t.Stop()
	for {
		ch := c.store.Changed()
		c.catchUpWithMetadata()
		select {
		case <-c.follow.stop:
			return
		case <-ch:
		case <-t.C:
		}
	}
}

// catchUpWithMetadata forgets the topics the metadata no longer holds,
// gives open logs their topic's configuration, and removes this broker's
// files of the deleted topics it is listed for, telling the store — a
// command of the metadata group, waited for with no lock held.
func (c *Cluster) catchUpWithMetadata() {
	var topics map[string]TopicMetadata
	var deleting []string
	c.store.Read(func(s *MetaState) {
		topics = maps.Clone(s.Meta.Topics)
		for name, d := range s.Deleting {
			for _, id := range d.Brokers {
				if id == c.localID {
					deleting = append(deleting, name)
				}
			}
		}
	})
	c.mu.RLock()
	var gone []string
	for name := range c.topics {
		if _, ok := topics[name]; !ok {
			gone = append(gone, name)
		}
	}
	c.mu.RUnlock()
	for _, name := range gone {
		if _, err := c.topic(name); err != nil {
			continue // forgotten now
		}
	}
	m, err := c.hosted(c.localID)
	if err != nil {
		return
	}
	c.applyTopicConfigs(m, topics)
	c.follow.mu.Lock()
	deleting = slices.DeleteFunc(deleting, func(name string) bool { return c.follow.removing[name] })
	for _, name := range deleting {
		c.follow.removing[name] = true
	}
	c.follow.mu.Unlock()
	if len(deleting) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	for _, name := range deleting {
		if err := c.removeOwnFiles(ctx, m, name); err != nil {
			c.logf("the files of deleted topic %q could not be removed yet: %v", name, err)
		}
	}
	c.follow.mu.Lock()
	for _, name := range deleting {
		delete(c.follow.removing, name)
	}
	c.follow.mu.Unlock()
}

// applyTopicConfigs gives broker m's open logs of each of topics the
// topic's segment settings, where they changed since the last time.
func (c *Cluster) applyTopicConfigs(m *member, topics map[string]TopicMetadata) {
	c.follow.mu.Lock()
	defer c.follow.mu.Unlock()
	for name := range topics {
		cfg, err := c.TopicConfig(name)
		if err != nil || c.follow.applied[name] == cfg {
			continue
		}
		bytes, age := SegmentSettings(cfg)
		if err := m.b.setSegmentOptions(name, bytes, age); err != nil {
			c.logf("topic %q: new segment settings not applied to its open logs: %v", name, err)
			continue
		}
		c.follow.applied[name] = cfg
	}
	for name := range c.follow.applied {
		if _, ok := topics[name]; !ok {
			delete(c.follow.applied, name)
		}
	}
}

// removeOwnFiles removes broker m's files of the deleted topic name and
// tells the store.
func (c *Cluster) removeOwnFiles(ctx context.Context, m *member, name string) error {
	if err := topic.ValidateName(name); err != nil {
		return err // never build a path from a name that could escape
	}
	m.b.dropTopic(name)
	m.forget(name)
	dir := filepath.Join(BrokerDir(c.root, m.id()), brokerTopicsDir)
	if err := removeEntry(m.b.opts.FS, dir, name); err != nil {
		return fmt.Errorf("remove %s: %w", filepath.Join(dir, name), err)
	}
	return c.store.(TopicStore).TopicFilesRemoved(ctx, name, m.id())
}

// stopFollowing ends followMetadata and waits for it.
func (c *Cluster) stopFollowing() {
	if c.follow == nil {
		return
	}
	c.follow.once.Do(func() { close(c.follow.stop) })
	<-c.follow.done
}

// topicStore is the store's TopicStore in cluster mode; nil in one
// process, whose Cluster creates and deletes topics itself (create.go,
// delete.go).
func (c *Cluster) topicStore() TopicStore {
	if c.files != nil {
		return nil
	}
	ts, _ := c.store.(TopicStore)
	return ts
}

// createTopicInStore is CreateTopicWithConfig in cluster mode: checked
// here first, committed as one command, each process creating its own
// replicas as it learns of them.
func (c *Cluster) createTopicInStore(ts TopicStore, name string, partitions, replicationFactor int, overrides map[string]string) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	return ts.CreateTopic(ctx, name, partitions, replicationFactor, overrides)
}

// deleteTopicInStore is DeleteTopic in cluster mode: one command, after
// which every process holding replicas of the topic removes its files.
func (c *Cluster) deleteTopicInStore(ts TopicStore, name string) (DeleteTopicResult, error) {
	var tm TopicMetadata
	var ok bool
	c.store.Read(func(s *MetaState) { tm, ok = s.Meta.Topics[name] })
	if !ok {
		return DeleteTopicResult{}, fmt.Errorf("cluster: topic %q: %w", name, ErrUnknownTopic)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	n, err := ts.DeleteTopic(ctx, name)
	if err != nil {
		return DeleteTopicResult{}, err
	}
	if t, err := c.topic(name); err == nil {
		c.forgetTopic(name, t)
	}
	c.catchUpWithMetadata()
	return DeleteTopicResult{Topic: name, PartitionCount: tm.PartitionCount, ReplicationFactor: tm.ReplicationFactor, OffsetFiles: n}, nil
}

// alterTopicConfigInStore is AlterTopicConfig in cluster mode.
func (c *Cluster) alterTopicConfigInStore(ts TopicStore, name string, set map[string]string, remove []string) (topic.Config, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	if err := ts.AlterTopicConfig(ctx, name, set, remove); err != nil {
		return topic.Config{}, err
	}
	c.catchUpWithMetadata()
	return c.TopicConfig(name)
}
