package kafka_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// admin is a kadm client of f's listeners.
func (f *fixture) admin(t *testing.T) *kadm.Client {
	return kadm.NewClient(f.client(t))
}

// TestKafkaAdminCreateTopics: kadm creates a topic with PyStream's
// configuration keys, which the topic then has; validate_only checks
// without creating; each refusal has the code docs/kafka-admin.md names.
func TestKafkaAdminCreateTopics(t *testing.T) {
	f := start(t, 3, 1, 1)
	adm := f.admin(t)

	res, err := adm.CreateTopic(ctx(t), 2, 3, map[string]*string{"retention.ms": kmsg.StringPtr("60000"), "segment.bytes": kmsg.StringPtr("1048576")}, "orders")
	require.NoError(t, err)
	require.NoError(t, res.Err)
	require.Equal(t, int32(2), res.NumPartitions)
	require.Equal(t, int16(3), res.ReplicationFactor)
	info, err := f.c.Topic("orders")
	require.NoError(t, err)
	require.Equal(t, 2, info.PartitionCount)
	cfg, err := f.c.TopicConfig("orders")
	require.NoError(t, err)
	require.Equal(t, int64(60000), cfg.RetentionMs)

	vres, err := adm.ValidateCreateTopics(ctx(t), 1, 1, nil, "dry")
	require.NoError(t, err)
	require.NoError(t, vres["dry"].Err)
	_, err = f.c.Topic("dry")
	require.ErrorIs(t, err, cluster.ErrUnknownTopic, "validate_only creates nothing")

	refusals := []struct {
		name       string
		partitions int32
		rf         int16
		config     map[string]*string
		validate   bool
		want       *kerr.Error
	}{
		{"orders", 2, 3, nil, false, kerr.TopicAlreadyExists},
		{"orders", 2, 3, nil, true, kerr.TopicAlreadyExists},
		{"ORDERS", 1, 1, nil, true, kerr.InvalidTopicException},
		{"ORDERS", 1, 1, nil, false, kerr.InvalidTopicException},
		{"bad name", 1, 1, nil, false, kerr.InvalidTopicException},
		{"t1", 0, 1, nil, false, kerr.InvalidPartitions},
		{"t1", -1, 1, nil, false, kerr.InvalidPartitions}, // no server default
		{"t1", 1, 4, nil, false, kerr.InvalidReplicationFactor},
		{"t1", 1, -1, nil, true, kerr.InvalidReplicationFactor},
		{"t1", 1, 1, map[string]*string{"cleanup.policy": kmsg.StringPtr("compact")}, false, kerr.InvalidConfig},
		{"t1", 1, 1, map[string]*string{"retention.ms": kmsg.StringPtr("soon")}, true, kerr.InvalidConfig},
	}
	for _, r := range refusals {
		create := adm.CreateTopics
		if r.validate {
			create = adm.ValidateCreateTopics
		}
		all, err := create(ctx(t), r.partitions, r.rf, r.config, r.name)
		require.NoError(t, err)
		got := all[r.name]
		require.ErrorIs(t, got.Err, r.want, "%+v: %s", r, got.ErrMessage)
		require.NotEmpty(t, got.ErrMessage, "a refusal says why")
	}
	_, err = f.c.Topic("t1")
	require.ErrorIs(t, err, cluster.ErrUnknownTopic)
}

// TestKafkaAdminDeleteTopics: kadm deletes a topic by name; an unknown
// one is UNKNOWN_TOPIC_OR_PARTITION.
func TestKafkaAdminDeleteTopics(t *testing.T) {
	f := start(t, 1, 1, 1)
	adm := f.admin(t)
	res, err := adm.DeleteTopic(ctx(t), "events")
	require.NoError(t, err)
	require.NoError(t, res.Err)
	_, err = f.c.Topic("events")
	require.ErrorIs(t, err, cluster.ErrUnknownTopic)

	all, err := adm.DeleteTopics(ctx(t), "events")
	require.NoError(t, err)
	require.ErrorIs(t, all["events"].Err, kerr.UnknownTopicOrPartition)
}
