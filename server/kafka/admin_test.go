package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/kafka"
)

// noDelete is a backend that does not delete topics, as cluster mode.
type noDelete struct{ *backend.Local }

func (noDelete) DeleteTopic(name string) (cluster.DeleteTopicResult, error) {
	return cluster.DeleteTopicResult{}, fmt.Errorf("delete topic %q: %w", name, errors.ErrUnsupported)
}

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
// one is UNKNOWN_TOPIC_OR_PARTITION; a backend that does not delete
// topics answers TOPIC_DELETION_DISABLED.
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

	require.NoError(t, f.c.CreateTopic("kept", 1, 1))
	other := serveAlso(t, f, noDelete{embedded(f.c)})
	all, err = kadm.NewClient(f.clientOf(t, other)).DeleteTopics(ctx(t), "kept")
	require.NoError(t, err)
	require.ErrorIs(t, all["kept"].Err, kerr.TopicDeletionDisabled)
	_, err = f.c.Topic("kept")
	require.NoError(t, err)
}

// serveAlso serves f's cluster through backend on a second listener until
// the test ends.
func serveAlso(t *testing.T, f *fixture, backend kafka.Cluster) *kafka.Server {
	t.Helper()
	srv, err := kafka.New(backend, kafka.Config{Host: "127.0.0.1", ReconcileEvery: 20 * time.Millisecond})
	require.NoError(t, err)
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(c) }()
	srv.Reconcile()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return srv
}

// clientOf is a kgo client of srv's listeners.
func (f *fixture) clientOf(t *testing.T, srv *kafka.Server, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	var seeds []string
	for _, b := range f.c.Brokers() {
		if a := srv.Addr(b.ID); a != "" {
			seeds = append(seeds, a)
		}
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond })}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}
