package clusternode

import (
	"context"
	"fmt"
	"maps"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// This file is a topic's configuration in cluster mode: the overrides
// live in the replicated metadata (cluster.TopicMetadata.Config, changed
// by the alter-config command), the server-wide defaults in this node's
// Config.TopicDefaults; the effective configuration is the one laid over
// the other, as in the embedded cluster (cluster/topicconfig.go).

// TopicDefaults is the server-wide topic configuration.
func (n *Node) TopicDefaults() topic.Config { return *n.cfg.TopicDefaults }

// TopicConfigOverrides returns the keys set for a topic (a copy), nil
// when it has none. A topic this node has not heard of yet is waited for
// briefly, as by Topic.
func (n *Node) TopicConfigOverrides(name string) (map[string]string, error) {
	n.awaitTopic(name)
	var out map[string]string
	var ok bool
	n.fsm.read(func(s *cluster.MetaState) {
		var t cluster.TopicMetadata
		if t, ok = s.Meta.Topics[name]; ok {
			out = maps.Clone(t.Config)
		}
	})
	if !ok {
		return nil, fmt.Errorf("cluster: topic %q: %w", name, cluster.ErrUnknownTopic)
	}
	return out, nil
}

// TopicConfig returns a topic's effective configuration: this node's
// TopicDefaults with the topic's overrides laid over it.
func (n *Node) TopicConfig(name string) (topic.Config, error) {
	overrides, err := n.TopicConfigOverrides(name)
	if err != nil {
		return topic.Config{}, err
	}
	return n.cfg.TopicDefaults.With(overrides)
}

// AlterTopicConfig sets the keys of set and removes those of remove from
// a topic's overrides through Raft (the alter-config command, journaled
// where it is applied), and returns the new effective configuration. The
// change is checked here first against this node's copy, so that a bad
// key is refused with its *topic.ConfigError; the leader checks it again
// against the current overrides.
func (n *Node) AlterTopicConfig(name string, set map[string]string, remove []string) (topic.Config, error) {
	current, err := n.TopicConfigOverrides(name)
	if err != nil {
		return topic.Config{}, err
	}
	if _, err := topic.AlterConfigOverrides(current, set, remove); err != nil {
		return topic.Config{}, fmt.Errorf("cluster: alter config of topic %q: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(n.ctx, requestTimeout)
	defer cancel()
	if _, err := n.propose(ctx, cluster.MetaCommand{Op: cluster.OpAlterConfig, Topic: name, Config: set, DeleteConfig: remove}); err != nil {
		return topic.Config{}, err
	}
	// propose returns once this node's copy has applied the change.
	return n.TopicConfig(name)
}
