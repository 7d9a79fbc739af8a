package server

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/server/apiclient"
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

// fetchWritten is a kgo hook that tells when a Fetch request has been
// written to a broker.
type fetchWritten chan struct{}

func (f fetchWritten) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == kmsg.Fetch.Int16() && err == nil {
		select {
		case f <- struct{}{}:
		default:
		}
	}
}

// TestKafkaWiringHTTPWriteWakesFetch: a Kafka fetch waiting for records
// is answered as soon as a record is POSTed over the HTTP API — the
// cluster's one "partition advanced" event (backend.Hub) wakes it,
// whichever protocol wrote. The listener's own re-check is pushed out of
// reach (an hour), and the fetch may wait 20 s: only the event can answer
// it within the test's 10 s.
func TestKafkaWiringHTTPWriteWakesFetch(t *testing.T) {
	cfg := Defaults()
	cfg.DataDir, cfg.LogLevel = t.TempDir(), LogLevel(LevelError)
	srv, err := New(cfg, NewLogger(io.Discard, cfg))
	require.NoError(t, err)
	srv.kafkaFreePorts = true
	srv.kafkaFetchRecheck = time.Hour
	r := serveExisting(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err = r.client.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	detail, err := r.client.Topic(ctx, "orders")
	require.NoError(t, err)
	leader := detail.Partitions[0].Leader
	logtest.WaitFor(t, 5*time.Second, "kafka listener", func() (bool, string) {
		return srv.KafkaAddr(leader) != "", "not listening"
	})
	written := make(fetchWritten, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr(leader)), kgo.WithHooks(written))
	require.NoError(t, err)
	defer cl.Close()
	_, err = cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	require.NoError(t, err)

	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = -1, 20_000, 1, 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "orders"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 0, 0, 1<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	type answer struct {
		resp kmsg.Response
		err  error
		at   time.Time
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := cl.Broker(leader).Request(ctx, req)
		answered <- answer{resp, err, time.Now()}
	}()
	<-written
	time.Sleep(200 * time.Millisecond) // the fetch is waiting: nothing to read yet
	select {
	case a := <-answered:
		t.Fatalf("the fetch answered before any record was written: %+v", a)
	default:
	}

	posted := time.Now()
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("over http")}})
	require.NoError(t, err)
	select {
	case a := <-answered:
		require.NoError(t, a.err)
		p := a.resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
		require.Zero(t, p.ErrorCode)
		require.Equal(t, int64(1), p.HighWatermark)
		require.NotEmpty(t, p.RecordBatches, "the record POSTed over HTTP")
		t.Logf("answered %s after the POST was sent", a.at.Sub(posted))
	case <-time.After(10 * time.Second):
		t.Fatal("a record POSTed over HTTP did not wake the waiting Kafka fetch")
	}
}

// TestKafkaWiringAuthFile: the server hands its auth file to the Kafka
// listener: a client without SASL is refused, the reader's token over
// SASL/PLAIN reads the topic list and may not produce
// (docs/kafka.md § Authentication and TLS).
func TestKafkaWiringAuthFile(t *testing.T) {
	srv, _, _ := startKafkaServer(t, "orders", 1, func(c *Config) { c.AuthFile = writeAuthFile(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	anon, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr(1)), kgo.RequestRetries(0))
	require.NoError(t, err)
	defer anon.Close()
	require.Error(t, anon.Ping(ctx), "no SASL: the connection is closed")

	reader, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr(1)), kgo.RequestRetries(0), kgo.DisableIdempotentWrite(),
		kgo.SASL(plain.Auth{User: "reader", Pass: tokenRead}.AsMechanism()))
	require.NoError(t, err)
	defer reader.Close()
	md, err := kadm.NewClient(reader).Metadata(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"orders"}, md.Topics.Names())
	err = reader.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr()
	require.ErrorIs(t, err, kerr.TopicAuthorizationFailed)
}
