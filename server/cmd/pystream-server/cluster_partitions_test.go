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
)

// docs/kafka.md § Adding partitions, in a cluster of processes: kadm grows
// a topic through one node (one command of the metadata group), every
// node's Metadata lists the new partitions, and a record produced to a
// new partition, whose replicas each node creates on first use, is
// consumed back; a count not larger is INVALID_PARTITIONS.
func TestClusterKafkaCreatePartitions(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", 1, 3)

	via := kadm.NewClient(c.kafkaClient(t, []int{2}))
	res, err := via.UpdatePartitions(ctx, 3, "events")
	require.NoError(t, err)
	require.NoError(t, res["events"].Err, res["events"].ErrMessage)

	for _, id := range c.ids() {
		adm := kadm.NewClient(c.kafkaClient(t, []int{id}))
		c.eventually(ctx, 10*time.Second, fmt.Sprintf("node %d lists 3 partitions", id), func() (bool, string) {
			md, err := adm.Metadata(ctx, "events")
			if err != nil {
				return false, err.Error()
			}
			td := md.Topics["events"]
			return len(td.Partitions) == 3, fmt.Sprintf("%d partitions", len(td.Partitions))
		})
	}

	prod := c.kafkaClient(t, []int{3}, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	rec := &kgo.Record{Topic: "events", Partition: 2, Value: []byte("on a new partition")}
	require.NoError(t, prod.ProduceSync(ctx, rec).FirstErr())
	cons := c.kafkaClient(t, c.ids(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"events": {2: kgo.NewOffset().AtStart()}}))
	fs := cons.PollFetches(ctx)
	require.NoError(t, fs.Err())
	recs := fs.Records()
	require.Len(t, recs, 1)
	require.Equal(t, "on a new partition", string(recs[0].Value))

	res, err = via.UpdatePartitions(ctx, 2, "events")
	require.NoError(t, err)
	require.ErrorIs(t, res["events"].Err, kerr.InvalidPartitions)
	require.Contains(t, res["events"].ErrMessage, "has 3 partition(s)")
}
