package kafka_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// min.insync.replicas over Kafka: set with kadm on a topic of
// replication factor 3, a produce goes on with one follower down and out
// of the active set, is refused with NOT_ENOUGH_REPLICAS (and a message
// naming the setting) with two down — kgo retries it, so RecordRetries
// bounds it — and goes on again once a follower is back and caught up.
func TestKafkaMinInsyncReplicas(t *testing.T) {
	f := start(t, 3, 1, 3)
	adm := kadm.NewClient(f.client(t))
	rs, err := adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("min.insync.replicas", "2")}, "events")
	require.NoError(t, err)
	require.NoError(t, rs[0].Err, rs[0].ErrMessage)
	rcs, err := adm.DescribeTopicConfigs(ctx(t), "events")
	require.NoError(t, err)
	rc, err := rcs.On("events", nil)
	require.NoError(t, err)
	got := configsByKey(rc)
	require.Equal(t, "2", *got["min.insync.replicas"].Value)
	require.Equal(t, kmsg.ConfigSourceDynamicTopicConfig, got["min.insync.replicas"].Source)

	st, err := f.c.Status("events", 0)
	require.NoError(t, err)
	down := func(id int) {
		require.NoError(t, f.c.StopBroker(id))
		_, err := f.c.Deactivate("events", 0, id)
		require.NoError(t, err)
	}
	prod := f.client(t, kgo.DefaultProduceTopic("events"), kgo.RecordRetries(2))
	down(st.Followers[0])
	require.NoError(t, prod.ProduceSync(ctx(t), &kgo.Record{Value: []byte("two active")}).FirstErr())

	down(st.Followers[1])
	err = prod.ProduceSync(ctx(t), &kgo.Record{Value: []byte("one active")}).FirstErr()
	require.ErrorIs(t, err, kerr.NotEnoughReplicas)

	nc := f.dial(t, st.Leader)
	resp := roundTrip(t, nc, produceRequest(9, batchOf(t, []byte("raw"))), 9).(*kmsg.ProduceResponse)
	rp := resp.Topics[0].Partitions[0]
	require.Equal(t, kerr.NotEnoughReplicas.Code, rp.ErrorCode)
	require.NotNil(t, rp.ErrorMessage)
	require.Contains(t, *rp.ErrorMessage, "min.insync.replicas=2")
	end, err := f.c.Status("events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(1), end.HighWatermark, "nothing of the refused writes is stored")
	require.Equal(t, uint64(1), *end.Replicas[0].LogEnd)

	_, err = f.c.StartBroker(st.Followers[1])
	require.NoError(t, err)
	_, err = f.c.RecoverReplica("events", 0, st.Followers[1])
	require.NoError(t, err)
	require.NoError(t, prod.ProduceSync(ctx(t), &kgo.Record{Value: []byte("back")}).FirstErr())
	recs, err := f.c.ReadCommitted("events", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 2)
}

// cleanup.policy=compact is refused with INVALID_CONFIG by CreateTopics
// (kadm, and a raw request whose ErrorMessage says compaction does not
// exist yet), and nothing is created; delete is taken.
func TestKafkaCleanupPolicyCompactRefused(t *testing.T) {
	f := start(t, 1, 1, 1)
	adm := kadm.NewClient(f.client(t))
	compact := "compact"
	res, err := adm.CreateTopic(ctx(t), 1, 1, map[string]*string{"cleanup.policy": &compact}, "compacted")
	require.ErrorIs(t, err, kerr.InvalidConfig)
	require.ErrorIs(t, res.Err, kerr.InvalidConfig)
	require.Contains(t, res.ErrMessage, "log compaction does not exist in PyStream yet")
	_, err = f.c.Topic("compacted")
	require.ErrorIs(t, err, cluster.ErrUnknownTopic)

	del := "delete"
	res, err = adm.CreateTopic(ctx(t), 1, 1, map[string]*string{"cleanup.policy": &del, "min.insync.replicas": kmsg.StringPtr("1")}, "deleting")
	require.NoError(t, err)
	require.NoError(t, res.Err, res.ErrMessage)
	overrides, err := f.c.TopicConfigOverrides("deleting")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"cleanup.policy": "delete", "min.insync.replicas": "1"}, overrides)

	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = 5, 5000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "compacted", 1, 1
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "cleanup.policy", kmsg.StringPtr("compact,delete")
	rt.Configs = append(rt.Configs, cfg)
	req.Topics = append(req.Topics, rt)
	resp := roundTrip(t, f.dial(t, 1), req, 5).(*kmsg.CreateTopicsResponse)
	require.Equal(t, kerr.InvalidConfig.Code, resp.Topics[0].ErrorCode)
	require.Contains(t, *resp.Topics[0].ErrorMessage, "compaction does not exist")
	_, err = f.c.Topic("compacted")
	require.ErrorIs(t, err, cluster.ErrUnknownTopic)
}
