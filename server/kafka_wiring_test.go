package server

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/log/logtest"
)

// TestKafkaWiringServesTheEmbeddedCluster: Serve opens a Kafka listener
// per broker next to the HTTP API; a record kgo produces is consumed back
// and counted in /metrics by API.
func TestKafkaWiringServesTheEmbeddedCluster(t *testing.T) {
	_, r, cl := startKafkaServer(t, "orders", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Key: []byte("k"), Value: []byte("v")}).FirstErr())
	fs := cl.PollFetches(ctx)
	require.NoError(t, fs.Err())
	require.Equal(t, []byte("v"), fs.Records()[0].Value)

	resp, err := http.Get(r.base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `pystream_kafka_requests_total{api="Produce"} 1`)
}

// TestKafkaWiringGroups: the server's classic group coordinator takes
// PYSTREAM_GROUP_MIN_SESSION_TIMEOUT, a kgo group consumer joins it
// through the Kafka listener and commits into the consumer's durable
// offsets, and /metrics shows the group's members and generation.
func TestKafkaWiringGroups(t *testing.T) {
	srv, r, cl := startKafkaServer(t, "orders", 1, func(c *Config) { c.GroupMinSessionTimeout = GroupSessionTimeout(100 * time.Millisecond) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr())
	member, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr(1)), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.SessionTimeout(500*time.Millisecond), kgo.HeartbeatInterval(100*time.Millisecond), kgo.DisableAutoCommit())
	require.NoError(t, err)
	defer member.Close()
	fs := member.PollFetches(ctx)
	require.NoError(t, fs.Err())
	require.Len(t, fs.Records(), 1)
	require.NoError(t, member.CommitUncommittedOffsets(ctx))
	off, ok, err := srv.cluster.LoadOffset("billing", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(1), off)

	resp, err := http.Get(r.base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `pystream_group_members{group="billing",protocol="classic"} 1`)
	require.Contains(t, string(body), `pystream_group_generation{group="billing",protocol="classic"} 1`)
	require.Contains(t, string(body), `pystream_group_rebalances_total{group="billing",protocol="classic"} 1`)
}

// startKafkaServer serves an embedded 3-broker server with its Kafka
// listeners on free loopback ports, creates topic (one partition of
// replication factor rf), and returns a kgo client seeded with broker 1
// that consumes the topic from its start.
func startKafkaServer(t *testing.T, topic string, rf int, edit ...func(*Config)) (*Server, *running, *kgo.Client) {
	t.Helper()
	cfg := Defaults()
	cfg.DataDir, cfg.LogLevel = t.TempDir(), LogLevel(LevelError)
	for _, e := range edit {
		e(&cfg)
	}
	srv, err := New(cfg, NewLogger(io.Discard, cfg))
	require.NoError(t, err)
	srv.kafkaFreePorts = true
	r := serveExisting(t, srv)
	require.NoError(t, srv.Cluster().CreateTopic(topic, 1, rf))
	logtest.WaitFor(t, 5*time.Second, "kafka listeners", func() (bool, string) {
		return srv.KafkaAddr(1) != "" && srv.KafkaAddr(2) != "" && srv.KafkaAddr(3) != "", "not all listening"
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr(1)), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return srv, r, cl
}
