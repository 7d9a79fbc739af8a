package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/pystream/pystream/topic"
)

// This file is a topic's configuration in the cluster
// (docs/design.md § Topic configuration). cluster.meta stores, per topic, only its
// overrides: the keys set for it, as Kafka stores a topic's dynamic
// configuration. The effective configuration is Options.TopicDefaults
// with the overrides laid over it (topic.Config.With), so a change of the
// server's defaults reaches every topic that does not override the key.
// The rule for keys and values is package topic's; nothing here decides
// what a value may be.

// TopicDefaults is the server-wide topic configuration
// (Options.TopicDefaults, or topic.DefaultConfig()).
func (c *Cluster) TopicDefaults() topic.Config { return *c.opts.TopicDefaults }

// TopicConfig returns a topic's effective configuration: the cluster's
// TopicDefaults with the topic's overrides laid over it. An unknown topic
// is ErrUnknownTopic. A topic whose creation is in progress (its replica
// logs being opened, cluster.meta not yet written) already has its
// configuration here, so that whoever opens those logs can ask.
func (c *Cluster) TopicConfig(name string) (topic.Config, error) {
	overrides, err := c.TopicConfigOverrides(name)
	if err != nil {
		return topic.Config{}, err
	}
	return c.opts.TopicDefaults.With(overrides)
}

// TopicConfigOverrides returns the keys set for a topic with their values
// (a copy), nil when it has none: what kafka-configs shows as
// DYNAMIC_TOPIC_CONFIG, every other key being the default. An unknown
// topic is ErrUnknownTopic.
func (c *Cluster) TopicConfigOverrides(name string) (map[string]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, ErrClosed
	}
	if cr := c.creating[name]; cr != nil {
		return maps.Clone(cr.tm.Config), nil
	}
	var overrides map[string]string
	var ok bool
	c.store.Read(func(s *MetaState) {
		var t TopicMetadata
		if t, ok = s.Meta.Topics[name]; ok {
			overrides = maps.Clone(t.Config)
		}
	})
	if !ok {
		return nil, fmt.Errorf("cluster: topic %q: %w", name, ErrUnknownTopic)
	}
	return overrides, nil
}

// AlterTopicConfig changes a topic's overrides: the keys of set take their
// values, the keys in remove go back to the default. The change is
// checked as a whole (topic.AlterConfigOverrides): an unknown key or a bad
// value is a *topic.ConfigError, and nothing changes. An unknown topic is
// ErrUnknownTopic. It is journaled like every change of cluster.meta
// (EventAlterConfig, with the overrides before and after): the intent,
// then cluster.meta, then the outcome. It returns the new effective
// configuration. A change that changes nothing writes nothing.
//
// Nothing acts on the new values here: whoever reads them (the replica
// logs) asks TopicConfig.
func (c *Cluster) AlterTopicConfig(name string, set map[string]string, remove []string) (topic.Config, error) {
	if ts := c.topicStore(); ts != nil {
		return c.alterTopicConfigInStore(ts, name, set, remove)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return topic.Config{}, ErrClosed
	}
	if _, ok := c.topics[name]; !ok {
		return topic.Config{}, fmt.Errorf("cluster: topic %q: %w", name, ErrUnknownTopic)
	}
	c.files.metaMu.Lock()
	defer c.files.metaMu.Unlock()
	before := c.files.meta.Topics[name].Config
	after, err := topic.AlterConfigOverrides(before, set, remove)
	if err != nil {
		return topic.Config{}, fmt.Errorf("cluster: alter config of topic %q: %w", name, err)
	}
	effective, err := c.opts.TopicDefaults.With(after)
	if err != nil {
		return topic.Config{}, fmt.Errorf("cluster: alter config of topic %q: %w", name, err)
	}
	if maps.Equal(before, after) {
		return effective, nil
	}
	next := c.files.meta.clone()
	t := next.Topics[name]
	t.Config = after
	next.Topics[name] = t
	o := c.newOp(byOperator, EventAlterConfig, nil, 0)
	o.topic = name
	intent := o.entry(PhaseIntent, describeConfigChange(name, before, after))
	intent.ConfigBefore, intent.ConfigAfter = maps.Clone(before), maps.Clone(after)
	off, err := o.append(context.Background(), intent)
	if err != nil {
		return topic.Config{}, fmt.Errorf("cluster: alter config of topic %q: nothing changed: %w", name, err)
	}
	o.intent = &off
	if err := c.files.persistLocked(next); err != nil {
		return topic.Config{}, o.fail(fmt.Errorf("cluster: alter config of topic %q: the configuration is unchanged: %w", name, err))
	}
	err = o.done(fmt.Sprintf("%s: configuration overrides now %s", name, describeOverrides(after)))
	bytes, age := SegmentSettings(effective)
	for _, m := range c.members { // c.mu is held
		if serr := m.b.setSegmentOptions(name, bytes, age); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	return effective, err
}

// setSegmentOptions gives the broker's open replica logs of a topic a new
// segment.bytes and segment.ms; logs opened later read them at open.
func (b *Broker) setSegmentOptions(topicName string, bytes int64, age time.Duration) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for k, l := range b.logs {
		if k.topic == topicName {
			if err := l.SetSegmentOptions(bytes, age); err != nil {
				errs = append(errs, fmt.Errorf("cluster: broker %d: %s/%d: %w", b.id, k.topic, k.partition, err))
			}
		}
	}
	return errors.Join(errs...)
}

// describeConfigChange is a configuration change in one phrase, for the
// journal.
func describeConfigChange(name string, before, after map[string]string) string {
	return fmt.Sprintf("%s: configuration overrides %s -> %s", name, describeOverrides(before), describeOverrides(after))
}

// describeOverrides renders overrides as key=value pairs in key order,
// "none" when there are none.
func describeOverrides(overrides map[string]string) string {
	if len(overrides) == 0 {
		return "none"
	}
	s := ""
	for i, key := range slices.Sorted(maps.Keys(overrides)) {
		if i > 0 {
			s += ", "
		}
		s += key + "=" + overrides[key]
	}
	return s
}

// reconcileAlterConfig gives the intent of a configuration change left
// without an outcome (at off) its outcome when the cluster is opened:
// completed when cluster.meta holds the intent's overrides, rolled back
// when it does not (cluster.meta is written atomically, so it is one or
// the other; a topic deleted since is rolled back).
func (c *Cluster) reconcileAlterConfig(off uint64, e JournalEntry) error {
	out := JournalEntry{Event: e.Event, By: ByStartup, Topic: e.Topic, Intent: &off}
	c.files.metaMu.Lock()
	t, found := c.files.meta.Topics[e.Topic]
	c.files.metaMu.Unlock()
	if found && maps.Equal(t.Config, e.ConfigAfter) {
		out.Phase, out.Summary = PhaseCompleted, "the process stopped after the change was written: overrides "+describeOverrides(t.Config)
	} else {
		out.Phase, out.Summary = PhaseRolledBack, "the process stopped before the change was written: overrides "+describeOverrides(t.Config)
	}
	_, err := c.files.journal.append(out)
	return err
}

// TopicConfig returns a topic's effective configuration as the broker's
// BrokerOptions.TopicConfig gives it (topic.DefaultConfig() when it has
// none): the accessor for whoever opens a replica log of the topic on this
// broker.
func (b *Broker) TopicConfig(topicName string) (topic.Config, error) {
	if b.opts.TopicConfig == nil {
		return topic.DefaultConfig(), nil
	}
	return b.opts.TopicConfig(topicName)
}
