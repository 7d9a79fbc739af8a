package clusternode_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/topic"
)

// TestNodeTopicConfig pins a topic's configuration in cluster mode
// (cluster/topicconfig.go's rule over the node's defaults;
// cluster/process.go's catchUpWithMetadata): the overrides travel in the
// create-topic and alter-config commands through whichever node is asked,
// a refusal where the command is applied comes back through the node that
// forwarded it as the topic layer's own error, every node shows the same
// effective configuration, journaled once with the overrides before and
// after, and every process gives its open replica logs a changed
// segment.bytes: after it shrinks, the leader and its followers roll
// segments at the new size.
func TestNodeTopicConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "tuned"
		c := start(t, 3, clustertest.Options{})
		via := others(c, c.Controller())[0] // forwards its proposals to the metadata leader
		created := map[string]string{"retention.ms": "60000"}
		require.NoError(t, c.Via(via).CreateTopicWithConfig(name, 1, 3, created))
		var exists *cluster.TopicExistsError
		require.ErrorAs(t, c.Via(via).CreateTopicWithConfig(name, 1, 3, created), &exists)
		require.True(t, exists.SameSettings)
		var ce *topic.ConfigError
		require.ErrorAs(t, c.Via(via).CreateTopicWithConfig("bad", 1, 3, map[string]string{"segment.bytes": "1"}), &ce)
		require.Equal(t, "segment.bytes", ce.Key)

		payload := strings.Repeat("x", 100)
		for range 5 {
			send(t, c, via, name, 0, payload)
		}
		for _, id := range c.IDs() {
			require.Len(t, segmentFiles(t, c, id, name, 0), 1, "broker %d: one segment at the default size", id)
		}

		got, err := c.Via(via).AlterTopicConfig(name, map[string]string{"segment.bytes": "1024"}, []string{"retention.ms"})
		require.NoError(t, err)
		want := topic.DefaultConfig()
		want.SegmentBytes = 1024
		require.Equal(t, want, got)
		c.Await("every node has the new overrides", func() (bool, string) {
			for _, id := range c.IDs() {
				o, err := c.Via(id).TopicConfigOverrides(name)
				if err != nil || !maps.Equal(o, map[string]string{"segment.bytes": "1024"}) {
					return false, fmt.Sprintf("node %d: %v, %v", id, o, err)
				}
			}
			return true, ""
		})
		for _, id := range c.IDs() {
			cfg, err := c.Via(id).TopicConfig(name)
			require.NoError(t, err)
			require.Equal(t, want, cfg, "node %d", id)
		}

		// Refusals through the forwarding node change nothing.
		_, err = c.Via(via).AlterTopicConfig(name, map[string]string{"retention.ms": "1", "segment.ms": "0"}, nil)
		require.ErrorAs(t, err, &ce)
		require.Equal(t, "segment.ms", ce.Key)
		require.ErrorIs(t, err, topic.ErrInvalidConfig)
		_, err = c.Via(via).AlterTopicConfig("nope", nil, []string{"retention.ms"})
		require.ErrorIs(t, err, cluster.ErrUnknownTopic)
		o, err := c.Via(c.Controller()).TopicConfigOverrides(name)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"segment.bytes": "1024"}, o)

		var changes []cluster.JournalEntry
		for _, e := range journal(t, c, via) {
			if e.Event == cluster.EventAlterConfig {
				changes = append(changes, e)
			}
		}
		require.Len(t, changes, 1, "one change journaled: %v", changes)
		require.Equal(t, created, changes[0].ConfigBefore)
		require.Equal(t, map[string]string{"segment.bytes": "1024"}, changes[0].ConfigAfter)

		// The open logs take the new segment.bytes: about ten records of
		// 100 bytes fill a segment of 1024.
		for range 40 {
			send(t, c, via, name, 0, payload)
		}
		leader := statusVia(t, c, via, name, 0).Leader
		for _, id := range c.IDs() {
			role := "follower"
			if id == leader {
				role = "leader"
			}
			require.GreaterOrEqual(t, len(segmentFiles(t, c, id, name, 0)), 4, "broker %d, the %s: rolled at 1024 bytes", id, role)
		}
	})
}

// TestNodeMinInsyncReplicas: in cluster mode the leader's process checks
// min.insync.replicas (cluster/leader.go, the one write path), and the
// refusal comes back through a node that forwarded the write as the same
// *cluster.NotEnoughReplicasError; nothing is appended, and the write
// goes on once the setting is lowered. (Above the replication factor, as
// Kafka allows, it refuses every write.)
func TestNodeMinInsyncReplicas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "guarded"
		c := start(t, 3, clustertest.Options{})
		require.NoError(t, c.Via(c.Controller()).CreateTopicWithConfig(name, 1, 3, map[string]string{topic.MinInsyncReplicasKey: "4"}))
		leader := statusVia(t, c, c.Controller(), name, 0).Leader
		for _, via := range c.IDs() {
			_, err := cluster.NewProducer(c.Via(via), name).SendBatchTo(0, msgs("refused"))
			var ne *cluster.NotEnoughReplicasError
			require.ErrorAs(t, err, &ne, "through node %d (leader %d)", via, leader)
			require.Equal(t, cluster.NotEnoughReplicasError{Topic: name, Partition: 0, Active: 3, MinInsync: 4}, *ne)
			require.ErrorIs(t, err, cluster.ErrNotEnoughReplicas)
		}
		require.Empty(t, replicaRecords(t, c, leader, name, 0), "nothing appended on the leader")
		_, err := c.Via(c.Controller()).AlterTopicConfig(name, map[string]string{topic.MinInsyncReplicasKey: "3"}, nil)
		require.NoError(t, err)
		c.Await("every node has min.insync.replicas=3", func() (bool, string) {
			for _, id := range c.IDs() {
				o, err := c.Via(id).TopicConfigOverrides(name)
				if err != nil || o[topic.MinInsyncReplicasKey] != "3" {
					return false, fmt.Sprintf("node %d: %v, %v", id, o, err)
				}
			}
			return true, ""
		})
		for _, via := range c.IDs() {
			send(t, c, via, name, 0, "taken")
		}
	})
}
