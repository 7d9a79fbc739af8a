package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// docs/kafka.md § Log directories and leader elections in a cluster of
// processes: each node's DescribeLogDirs describes its own broker's
// directory, with its replica of each partition (the written one
// holding the records, every lag 0 once the followers hold them); kadm's
// preferred election, sent to the controller, hands a partition whose
// leadership an operator moved away back to its preferred replica.
func TestClusterKafkaLogDirsElectLeaders(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", 2, 3)
	prod := c.kafkaClient(t, c.ids(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 5 {
		require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: 0, Value: fmt.Appendf(nil, "%064d", i)}).FirstErr())
	}

	for _, id := range c.ids() {
		c.eventually(ctx, 10*time.Second, fmt.Sprintf("node %d describes its log directory", id), func() (bool, string) {
			r, err := c.kafkaTry(ctx, t, id, kmsg.NewPtrDescribeLogDirsRequest())
			if err != nil {
				return false, err.Error()
			}
			resp := r.(*kmsg.DescribeLogDirsResponse)
			if len(resp.Dirs) != 1 || len(resp.Dirs[0].Topics) != 1 {
				return false, fmt.Sprintf("%+v", resp.Dirs)
			}
			d := resp.Dirs[0]
			if d.ErrorCode != 0 || d.Dir != fmt.Sprintf("broker-%06d", id) || d.Topics[0].Topic != "events" || len(d.Topics[0].Partitions) != 2 {
				return false, fmt.Sprintf("%+v", d)
			}
			for _, p := range d.Topics[0].Partitions {
				if p.OffsetLag != 0 || (p.Partition == 0 && p.Size < 5*64) {
					return false, fmt.Sprintf("partition %+v", p)
				}
			}
			return true, ""
		})
	}

	d, err := c.topic(ctx, 1, "events")
	require.NoError(t, err)
	p0 := d.Partitions[0]
	require.Equal(t, p0.Preferred, p0.Leader)
	away := p0.Followers[0]
	_, err = c.client(1).MoveLeader(ctx, "events", 0, away)
	require.NoError(t, err)

	adm := kadm.NewClient(c.kafkaClient(t, c.ids()))
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"events": {0: {}}})
	require.NoError(t, err)
	require.NoError(t, res["events"][0].Err, res["events"][0].ErrMessage)
	c.eventually(ctx, 10*time.Second, "the preferred replica leads partition 0 again", func() (bool, string) {
		d, err := c.topic(ctx, away, "events")
		if err != nil {
			return false, err.Error()
		}
		return d.Partitions[0].Leader == p0.Preferred, fmt.Sprintf("leader %d, preferred %d", d.Partitions[0].Leader, p0.Preferred)
	})
	res, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	require.NoError(t, err)
	require.Empty(t, res, "no partition needs an election")
}
