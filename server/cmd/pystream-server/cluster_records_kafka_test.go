package main

import (
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

// docs/kafka.md § Deleting records: in a cluster of processes kadm's
// DeleteRecords, through any node, raises the log start on the leader's
// node, and its followers' nodes take it (the leader moved to one of them
// answers the same earliest offset); a node that does not lead the
// partition answers NOT_LEADER_OR_FOLLOWER. OffsetForLeaderEpoch, on the
// new leader, ends the old epoch where the new one's records start.
func TestClusterKafkaDeleteRecordsAndEpochs(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", 1, 3)

	prod := c.kafkaClient(t, c.ids(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	send := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: fmt.Appendf(nil, "r%d", i)}).FirstErr())
		}
	}
	send(0, 10)
	d, err := c.topic(ctx, 1, "events")
	require.NoError(t, err)
	leader, e1 := d.Partitions[0].Leader, int32(d.Partitions[0].LeaderEpoch)
	other := c.ids(leader)[0]

	adm := kadm.NewClient(c.kafkaClient(t, []int{other}))
	rs, err := adm.DeleteRecords(ctx, kadm.Offsets{"events": {0: {Topic: "events", Partition: 0, At: 4}}})
	require.NoError(t, err)
	r, ok := rs.Lookup("events", 0)
	require.True(t, ok)
	require.NoError(t, r.Err)
	require.Equal(t, int64(4), r.LowWatermark)

	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version = 2
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "events"
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = 6
	rt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{rp}
	req.Topics = []kmsg.DeleteRecordsRequestTopic{rt}
	resp := c.kafkaRequest(ctx, t, other, req).(*kmsg.DeleteRecordsResponse)
	require.Equal(t, kerr.NotLeaderForPartition.Code, resp.Topics[0].Partitions[0].ErrorCode)

	// The follower took the log start: led by it, the partition starts
	// at 4 still.
	_, err = c.client(1).MoveLeader(ctx, "events", 0, other)
	require.NoError(t, err)
	send(10, 12)
	c.eventually(ctx, 10*time.Second, "the earliest offset is 4 on the new leader", func() (bool, string) {
		lo, err := adm.ListStartOffsets(ctx, "events")
		if err != nil {
			return false, err.Error()
		}
		o, _ := lo.Lookup("events", 0)
		return o.Err == nil && o.Offset == 4, fmt.Sprintf("offset %d, err %v", o.Offset, o.Err)
	})

	d, err = c.topic(ctx, 1, "events")
	require.NoError(t, err)
	require.Equal(t, other, d.Partitions[0].Leader)
	e2 := int32(d.Partitions[0].LeaderEpoch)
	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.Version, oe.ReplicaID = 4, -1
	ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
	ot.Topic = "events"
	for _, asked := range []int32{e1, e2} {
		op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		op.CurrentLeaderEpoch, op.LeaderEpoch = e2, asked
		ot.Partitions = append(ot.Partitions, op)
	}
	oe.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{ot}
	ans := c.kafkaRequest(ctx, t, other, oe).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions
	require.Len(t, ans, 2)
	got := fmt.Sprintf("%d/%d/%d %d/%d/%d", ans[0].ErrorCode, ans[0].LeaderEpoch, ans[0].EndOffset, ans[1].ErrorCode, ans[1].LeaderEpoch, ans[1].EndOffset)
	require.Equal(t, fmt.Sprintf("0/%d/10 0/%d/12", e1, e2), got)

	cons := c.kafkaClient(t, []int{other}, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var values []string
	for len(values) < 8 {
		fs := cons.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "read %v", values)
		fs.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
	}
	require.Equal(t, []string{"r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11"}, values)
}
