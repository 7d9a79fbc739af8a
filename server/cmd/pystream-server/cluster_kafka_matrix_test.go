package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka/kafkatest"
)

// docs/kafka-admin.md § Clients tested, in a cluster of processes: the
// compatibility matrix's Python and kcat rows (kafkatest.RunAdminMatrix,
// the same programs and assertions as the embedded cluster's
// TestKafkaAdminMatrixPython) against three pystream-server processes
// joined by Raft, every client bootstrapped from node 1. What differs
// from the embedded cluster is where: the node leading the metadata group
// is the controller and the group coordinator, so it alone lists the
// groups; every node describes its own broker id; and a change the
// controller acknowledged reaches the other nodes' metadata a moment
// later (Target.Settle), as Kafka's admin clients document. One cluster
// serves every row.
func TestClusterKafkaAdminMatrixPython(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", 3, 3)
	for _, p := range []string{"kp", "cf"} {
		for _, name := range []string{p + "-conf", p + "-doomed", p + "-grow"} {
			c.createTopic(ctx, 1, name, 2, 1)
		}
		_, err := c.client(1).AlterTopicConfig(ctx, p+"-conf", map[string]string{"retention.ms": "60000"}, nil)
		require.NoError(t, err)
	}
	for _, id := range c.ids() {
		c.eventually(ctx, 10*time.Second, fmt.Sprintf("node %d has the retention.ms overrides", id), func() (bool, string) {
			for _, name := range []string{"kp-conf", "cf-conf"} {
				if o := c.topicOverrides(ctx, t, id, name); fmt.Sprint(o) != "map[retention.ms:60000]" {
					return false, fmt.Sprintf("%s: %v", name, o)
				}
			}
			return true, ""
		})
	}
	leader := c.controller(ctx, c.ids(), 30*time.Second)
	c.awaitCoordinator(ctx, t, c.ids(), leader)
	adm := kadm.NewClient(c.kafkaClient(t, c.ids()))
	var offsets kadm.Offsets
	offsets.AddOffset("events", 0, 0, -1)
	offsets.AddOffset("events", 1, 0, -1)
	for _, g := range []string{"kp-keep", "kp-gone", "cf-keep", "cf-gone"} {
		resp, err := adm.CommitOffsets(ctx, g, offsets)
		require.NoError(t, err)
		require.NoError(t, resp.Error())
	}

	versions := c.kafkaRequest(ctx, t, 1, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	grow := false
	for _, k := range versions.ApiKeys {
		grow = grow || k.ApiKey == int16(kmsg.CreatePartitions)
	}
	kafkatest.RunAdminMatrix(t, kafkatest.Target{
		Bootstrap:    c.node(1).kafkaAddr,
		Brokers:      c.ids(),
		Controller:   leader,
		GroupLister:  leader,
		Grow:         grow,
		BrokerConfig: kafkatest.DefaultBrokerConfig,
		// A node learns a deletion or a grown topic from the metadata
		// group after the controller acknowledged it.
		Settle:    10 * time.Second,
		Overrides: func(t *testing.T, name string) map[string]string { return c.topicOverrides(ctx, t, leader, name) },
		Topics: func(t *testing.T) map[string]int {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			ts, err := c.client(leader).Topics(rctx)
			require.NoError(t, err)
			out := map[string]int{}
			for _, ti := range ts.Topics {
				out[ti.Name] = ti.PartitionCount
			}
			return out
		},
	})
}

// topicOverrides is topic name's configuration overrides as node id's
// HTTP API reports them.
func (c *testCluster) topicOverrides(ctx context.Context, t *testing.T, id int, name string) map[string]string {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cfg, err := c.client(id).TopicConfig(rctx, name)
	require.NoError(t, err)
	out := map[string]string{}
	for _, k := range cfg.ConfigOverrides {
		out[k] = cfg.Config[k]
	}
	return out
}
