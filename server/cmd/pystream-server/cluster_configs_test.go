package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// docs/kafka-admin.md § Configurations in a cluster of processes: kadm alters a
// topic's configuration through one node (SET, then the whole set
// replaced), the change goes through the metadata group, and every node
// describes it; a broker describes its own id, and refuses to alter it.
func TestClusterKafkaConfigs(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", 1, 3)

	via := kadm.NewClient(c.kafkaClient(t, []int{2}))
	rs, err := via.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kmsg.StringPtr("60000")}}, "events")
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.NoError(t, rs[0].Err, rs[0].ErrMessage)
	rs, err = via.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "segment.ms", Value: kmsg.StringPtr("5000")}, {Name: "retention.ms", Value: kmsg.StringPtr("60000")}}, "events")
	require.NoError(t, err)
	require.NoError(t, rs[0].Err, rs[0].ErrMessage)

	for _, id := range c.ids() {
		adm := kadm.NewClient(c.kafkaClient(t, []int{id}))
		c.eventually(ctx, 10*time.Second, fmt.Sprintf("node %d describes the new configuration", id), func() (bool, string) {
			rcs, err := adm.DescribeTopicConfigs(ctx, "events")
			if err != nil {
				return false, err.Error()
			}
			got := map[string]string{}
			for _, rc := range rcs {
				for _, cfg := range rc.Configs {
					if cfg.Source == kmsg.ConfigSourceDynamicTopicConfig {
						got[cfg.Key] = *cfg.Value
					}
				}
			}
			return fmt.Sprint(got) == "map[retention.ms:60000 segment.ms:5000]", fmt.Sprint(got)
		})
	}

	brokers, err := via.DescribeBrokerConfigs(ctx, 3)
	require.NoError(t, err)
	b3, err := brokers.On("3", nil)
	require.NoError(t, err)
	require.NoError(t, b3.Err)
	ids := map[string]string{}
	for _, cfg := range b3.Configs {
		ids[cfg.Key] = *cfg.Value
	}
	require.Equal(t, "3", ids["broker.id"])
	ar, err := via.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: kmsg.StringPtr("1")}}, 3)
	require.NoError(t, err)
	require.ErrorIs(t, ar[0].Err, kerr.InvalidRequest)
}
