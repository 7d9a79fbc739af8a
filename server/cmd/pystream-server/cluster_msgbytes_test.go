package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// docs/kafka-admin.md § Configurations, in a cluster of processes:
// max.message.bytes and message.timestamp.type,
// set through one node, hold on the partition leader's node: a batch
// over the limit is MESSAGE_TOO_LARGE, and a LogAppendTime topic's
// records read with their append time and LogAppendTime as its type.
func TestClusterKafkaMessageKeys(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", 1, 3)

	via := kadm.NewClient(c.kafkaClient(t, []int{2}))
	rs, err := via.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "max.message.bytes", Value: kmsg.StringPtr("2048")},
		{Op: kadm.SetConfig, Name: "message.timestamp.type", Value: kmsg.StringPtr("LogAppendTime")}}, "events")
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
			for _, cfg := range rcs[0].Configs {
				if cfg.Source == kmsg.ConfigSourceDynamicTopicConfig {
					got[cfg.Key] = *cfg.Value
				}
			}
			return fmt.Sprint(got) == "map[max.message.bytes:2048 message.timestamp.type:LogAppendTime]", fmt.Sprint(got)
		})
	}

	prod := c.kafkaClient(t, c.ids(), kgo.DefaultProduceTopic("events"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	err = prod.ProduceSync(ctx, &kgo.Record{Value: bytes.Repeat([]byte("x"), 4096)}).FirstErr()
	require.ErrorIs(t, err, kerr.MessageTooLarge)
	created := time.UnixMilli(1_600_000_000_000)
	before := time.Now().UnixMilli()
	require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Value: []byte("v"), Timestamp: created}).FirstErr())
	after := time.Now().UnixMilli()

	cons := c.kafkaClient(t, c.ids(), kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []*kgo.Record
	for len(got) == 0 {
		fs := cons.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		got = append(got, fs.Records()...)
	}
	require.Equal(t, int64(0), got[0].Offset, "the refused batch wrote nothing")
	require.Equal(t, int8(1), got[0].Attrs.TimestampType(), "LogAppendTime")
	require.GreaterOrEqual(t, got[0].Timestamp.UnixMilli(), before)
	require.LessOrEqual(t, got[0].Timestamp.UnixMilli(), after)
}
