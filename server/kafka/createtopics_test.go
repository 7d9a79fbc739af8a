package kafka_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/kafka"
)

// createRequest is a CreateTopics v7 request of topics, with timeout_ms
// timeoutMs.
func createRequest(timeoutMs int32, validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis, req.ValidateOnly, req.Topics = 7, timeoutMs, validateOnly, topics
	return req
}

// newTopics is n topics named prefix-0.., each of partitions partitions
// and replication factor rf.
func newTopics(prefix string, n int, partitions int32, rf int16) []kmsg.CreateTopicsRequestTopic {
	out := make([]kmsg.CreateTopicsRequestTopic, n)
	for i := range out {
		out[i] = kmsg.NewCreateTopicsRequestTopic()
		out[i].Topic, out[i].NumPartitions, out[i].ReplicationFactor = fmt.Sprintf("%s-%d", prefix, i), partitions, rf
	}
	return out
}

// slowCreate is a backend whose topic creations take their time, as on a
// slow disk: the first waits for release, every creation then takes each
// more. It counts the creations it let through.
type slowCreate struct {
	kafka.Cluster
	started chan struct{} // closed when the first creation begins
	release chan struct{} // closed by the test to let the first go on
	each    time.Duration
	created atomic.Int64
	first   atomic.Bool
}

func (s *slowCreate) CreateTopicWithConfig(name string, partitions, rf int, config map[string]string) error {
	if s.first.CompareAndSwap(false, true) {
		close(s.started)
		<-s.release
	}
	time.Sleep(s.each)
	err := s.Cluster.CreateTopicWithConfig(name, partitions, rf, config)
	if err == nil {
		s.created.Add(1)
	}
	return err
}

// startSlow serves a one-broker cluster through a slowCreate, and the
// registry its metrics are in.
func startSlow(t *testing.T, each time.Duration, released bool) (*fixture, *slowCreate, *prometheus.Registry) {
	slow := &slowCreate{started: make(chan struct{}), release: make(chan struct{}), each: each}
	if released {
		close(slow.release)
	}
	reg := prometheus.NewRegistry()
	f := startOver(t, func(kc kafka.Cluster) kafka.Cluster { slow.Cluster = kc; return slow }, 1, 1, 1,
		func(c *kafka.Config) { c.Registerer = reg })
	return f, slow, reg
}

// topicCount is the number of topics of f's cluster.
func (f *fixture) topicCount() int { return len(f.c.Topics()) }

// TestKafkaCreateTopicsAbandoned: docs/security.md § Bounds — a
// CreateTopics request whose client closed its connection stops creating
// topics: of 200 asked for (with a minute's timeout), the one under way
// when the client left is finished and the rest are not created (a
// handful at most, however loaded the machine). Before,
// the request went on creating for minutes after its client had gone.
// The server serves others meanwhile: a Metadata request over a second
// connection is answered while the first creation is held, with the
// client still there and again once it has left, the handler still
// running (the creation it waits on is not released until both are
// answered); and after the handler ends it lists exactly the topics
// created.
func TestKafkaCreateTopicsAbandoned(t *testing.T) {
	const asked = 200
	// Each creation after the first takes 20 ms, a slow disk's pace: the
	// handler has 200 × 20 ms to notice its client left, and is asked to
	// within a quarter of that.
	f, slow, reg := startSlow(t, 20*time.Millisecond, false)
	release := sync.OnceFunc(func() { close(slow.release) })
	defer release() // a failure below must not leave the handler held
	nc := f.dial(t, 1)
	_, err := nc.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).
		AppendRequest(nil, createRequest(60_000, false, newTopics("gone", asked, 1, 1)...), 7))
	require.NoError(t, err)
	select {
	case <-slow.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the creation never began")
	}

	// Another client, served while the handler is held in its first
	// creation: each round trip waits at most the connection's five
	// seconds (f.dial's deadline).
	other := f.dial(t, 1)
	topics := func() []string {
		t.Helper()
		resp := roundTrip(t, other, kmsg.NewPtrMetadataRequest(), 0).(*kmsg.MetadataResponse)
		require.Len(t, resp.Brokers, 1)
		var names []string
		for _, rt := range resp.Topics {
			require.Zero(t, rt.ErrorCode, *rt.Topic)
			names = append(names, *rt.Topic)
		}
		return names
	}
	require.Equal(t, []string{"events"}, topics(), "served while the creation is held, its client there")
	require.NoError(t, nc.Close())
	require.Equal(t, []string{"events"}, topics(), "served once the client left, its handler still held")
	require.Zero(t, requestsOf(t, reg, "CreateTopics"), "the handler had not ended")
	release()

	// The handler's completion: its request is counted once answered.
	require.Eventually(t, func() bool { return requestsOf(t, reg, "CreateTopics") == 1 }, 10*time.Second, time.Millisecond)
	created := slow.created.Load()
	t.Logf("%d of %d topics created after the client left", created, asked)
	require.Less(t, created, int64(asked/4), "creation stops with the client")
	require.Equal(t, 1+int(created), f.topicCount(), "only those, and events")
	require.Len(t, topics(), 1+int(created), "served after the handler ended, the topics it created listed")
	require.Equal(t, float64(3), requestsOf(t, reg, "Metadata"))
}

// TestKafkaCreateTopicsTimeout: Kafka's CreateTopics timeout_ms bounds the
// request: the topic under way when it passes is finished and created,
// the others are REQUEST_TIMED_OUT, with a message, and not created, as
// Kafka answers topics its timeout cut short.
func TestKafkaCreateTopicsTimeout(t *testing.T) {
	const timeout = 50
	// Each creation takes the whole timeout: the deadline, counted from
	// before the first creation began, has passed once it ends.
	f, slow, _ := startSlow(t, timeout*time.Millisecond, true)
	resp := roundTrip(t, f.dial(t, 1), createRequest(timeout, false, newTopics("late", 5, 1, 1)...), 7).(*kmsg.CreateTopicsResponse)
	require.Len(t, resp.Topics, 5)
	require.Zero(t, resp.Topics[0].ErrorCode, "the first topic is created")
	for _, rt := range resp.Topics[1:] {
		require.Equal(t, kerr.RequestTimedOut.Code, rt.ErrorCode, rt.Topic)
		require.NotNil(t, rt.ErrorMessage)
		require.Contains(t, *rt.ErrorMessage, "timeout")
	}
	require.Equal(t, int64(1), slow.created.Load())
	require.Equal(t, 2, f.topicCount(), "late-0 and events")
}

// TestKafkaCreateTopicsBounds: docs/security.md § Bounds — a CreateTopics
// request is bounded whole before anything is created: more than
// bounds.MaxCreateTopics topics is INVALID_REQUEST for every topic, more
// than bounds.MaxCreatePartitions partitions together POLICY_VIOLATION for
// every topic, and one topic above bounds.MaxTopicPartitions (HTTP's limit
// too) INVALID_PARTITIONS; a refused request creates nothing, validate_only
// or not. Exactly the bound passes; a topic refused on its own does not
// count toward it, and the valid topics beside it are created.
func TestKafkaCreateTopicsBounds(t *testing.T) {
	f := start(t, 3, 1, 1)
	nc := f.dial(t, 1)
	ask := func(validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsResponse {
		t.Helper()
		resp := roundTrip(t, nc, createRequest(30_000, validateOnly, topics...), 7).(*kmsg.CreateTopicsResponse)
		require.Len(t, resp.Topics, len(topics))
		return resp
	}
	refusedWhole := func(resp *kmsg.CreateTopicsResponse, want *kerr.Error) {
		t.Helper()
		for _, rt := range resp.Topics {
			require.Equal(t, want.Code, rt.ErrorCode, "%s: %v", rt.Topic, rt.ErrorMessage)
			require.NotNil(t, rt.ErrorMessage, "a refusal says why")
		}
		require.Equal(t, 1, f.topicCount(), "nothing created")
	}

	for _, validateOnly := range []bool{false, true} {
		refusedWhole(ask(validateOnly, newTopics("many", bounds.MaxCreateTopics+1, 1, 1)...), kerr.InvalidRequest)
		half := int32(bounds.MaxCreatePartitions/2 + 1)
		refusedWhole(ask(validateOnly, newTopics("wide", 2, half, 1)...), kerr.PolicyViolation)
		refusedWhole(ask(validateOnly, newTopics("huge", 1, bounds.MaxTopicPartitions+1, 1)...), kerr.InvalidPartitions)
	}

	// Exactly the bound, checked without creating it.
	exact := newTopics("exact", 4, bounds.MaxCreatePartitions/4, 3)
	for _, rt := range ask(true, exact...).Topics {
		require.Zero(t, rt.ErrorCode, "%s: %v", rt.Topic, rt.ErrorMessage)
	}
	over := append(exact, newTopics("one-more", 1, 1, 1)...)
	refusedWhole(ask(true, over...), kerr.PolicyViolation)

	// Topics refused alone (too many partitions, a replication factor
	// above the brokers) do not count; the valid one is created.
	mixed := append(newTopics("huge", 1, 5000, 1), newTopics("badrf", 1, bounds.MaxCreatePartitions, 4)...)
	mixed = append(mixed, newTopics("fine", 1, 24, 3)...)
	resp := ask(false, mixed...)
	require.Equal(t, kerr.InvalidPartitions.Code, resp.Topics[0].ErrorCode)
	require.Equal(t, kerr.InvalidReplicationFactor.Code, resp.Topics[1].ErrorCode)
	require.Zero(t, resp.Topics[2].ErrorCode)
	info, err := f.c.Topic("fine-0")
	require.NoError(t, err)
	require.Equal(t, 24, info.PartitionCount)
	require.Equal(t, 2, f.topicCount())
}
