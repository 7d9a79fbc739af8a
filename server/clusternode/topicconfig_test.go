package clusternode

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// A topic's configuration in cluster mode: the overrides travel in the
// create-topic and alter-config commands, through whichever node is
// asked, and every node shows the same effective configuration
// (cluster/topicconfig.go's rule, over the node's defaults).
func TestNodeTopicConfig(t *testing.T) {
	c := newTestCluster(t, 2)
	via := c.follower() // forwarded to the metadata leader
	require.NoError(t, via.CreateTopicWithConfig("tuned", 1, 2, map[string]string{"segment.bytes": "4096"}))

	var exists *cluster.TopicExistsError
	require.ErrorAs(t, via.CreateTopicWithConfig("tuned", 1, 2, map[string]string{"segment.bytes": "4096"}), &exists)
	require.True(t, exists.SameSettings)
	var ce *topic.ConfigError
	require.ErrorAs(t, via.CreateTopicWithConfig("bad", 1, 2, map[string]string{"segment.bytes": "1"}), &ce)
	require.Equal(t, "segment.bytes", ce.Key)

	got, err := via.AlterTopicConfig("tuned", map[string]string{"retention.ms": "60000"}, []string{"segment.bytes"})
	require.NoError(t, err)
	want := topic.DefaultConfig()
	want.RetentionMs = 60000
	require.Equal(t, want, got)

	waitFor(t, waitLong, "every node has the new overrides", func() (bool, string) {
		for _, n := range c.running() {
			o, err := n.TopicConfigOverrides("tuned")
			if err != nil || !maps.Equal(o, map[string]string{"retention.ms": "60000"}) {
				return false, fmt.Sprintf("node %d: %v, %v", n.ID(), o, err)
			}
		}
		return true, ""
	})
	for _, n := range c.running() {
		cfg, err := n.TopicConfig("tuned")
		require.NoError(t, err)
		require.Equal(t, want, cfg, "node %d", n.ID())
		bc, err := n.broker.TopicConfig("tuned")
		require.NoError(t, err)
		require.Equal(t, want, bc, "node %d's broker", n.ID())
	}

	// Refusals: a bad key changes nothing; an unknown topic; and a
	// refusal where the command is applied comes back as the topic
	// layer's sentinel through a node that forwarded it.
	_, err = via.AlterTopicConfig("tuned", map[string]string{"retention.ms": "1", "segment.ms": "0"}, nil)
	require.ErrorAs(t, err, &ce)
	_, err = via.AlterTopicConfig("nope", nil, []string{"retention.ms"})
	require.ErrorIs(t, err, cluster.ErrUnknownTopic)
	_, err = via.propose(context.Background(), cluster.MetaCommand{Op: cluster.OpAlterConfig, Topic: "tuned", Config: map[string]string{"segment.ms": "0"}})
	require.ErrorIs(t, err, topic.ErrInvalidConfig)
	o, err := via.TopicConfigOverrides("tuned")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"retention.ms": "60000"}, o)

	// Journaled once, with the overrides before and after.
	entries, err := via.Journal(0, 0)
	require.NoError(t, err)
	var changes []cluster.JournalEntry
	for _, e := range entries {
		if e.Event == cluster.EventAlterConfig {
			changes = append(changes, e)
		}
	}
	require.Len(t, changes, 1)
	require.Equal(t, map[string]string{"segment.bytes": "4096"}, changes[0].ConfigBefore)
	require.Equal(t, map[string]string{"retention.ms": "60000"}, changes[0].ConfigAfter)
}
