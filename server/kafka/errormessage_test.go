package kafka_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka"
)

// refusedCase is a request refused as a whole or item by item, the code
// its first refused item carries, and what its ErrorMessage says (a part
// of it; "" for a version without the field, whose message is nil).
type refusedCase struct {
	name    string
	conn    func() net.Conn
	req     kmsg.Request
	code    int16
	message string
	// item is the first refused item's code and message.
	item func(kmsg.Response) (int16, *string)
}

// TestKafkaRefusalsSayWhy: every refused item carries an ErrorMessage in
// PyStream's terms where its version has the field — a role too small, a
// node loading its metadata, a version not served, an unknown topic —
// and none where the version has no such field.
func TestKafkaRefusalsSayWhy(t *testing.T) {
	plain := start(t, 1, 1, 1)
	sec := startSecured(t, false, 1, 1, 1)
	reader := func() net.Conn {
		nc := sec.dial(t, 1)
		plainAuth(t, nc, "reader")
		return nc
	}
	payer := func() net.Conn {
		nc := sec.dial(t, 1)
		plainAuth(t, nc, "payer")
		return nc
	}
	open := func() net.Conn { return plain.dial(t, 1) }
	loading := loadingNode(t)

	alterConfigs := kmsg.NewPtrAlterConfigsRequest()
	alterConfigs.Version = 2
	res := kmsg.NewAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "events"
	alterConfigs.Resources = []kmsg.AlterConfigsRequestResource{res}
	alterItem := func(r kmsg.Response) (int16, *string) {
		rr := r.(*kmsg.AlterConfigsResponse).Resources[0]
		return rr.ErrorCode, rr.ErrorMessage
	}

	describeConfigs := kmsg.NewPtrDescribeConfigsRequest()
	describeConfigs.Version = 4
	dres := kmsg.NewDescribeConfigsRequestResource()
	dres.ResourceType, dres.ResourceName = kmsg.ConfigResourceTypeTopic, "events"
	describeConfigs.Resources = []kmsg.DescribeConfigsRequestResource{dres}

	createTopics := func(version int16, name string) *kmsg.CreateTopicsRequest {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version, req.TimeoutMillis = version, 5000
		tp := kmsg.NewCreateTopicsRequestTopic()
		tp.Topic, tp.NumPartitions, tp.ReplicationFactor = name, 1, 1
		req.Topics = []kmsg.CreateTopicsRequestTopic{tp}
		return req
	}
	createItem := func(r kmsg.Response) (int16, *string) {
		rt := r.(*kmsg.CreateTopicsResponse).Topics[0]
		return rt.ErrorCode, rt.ErrorMessage
	}
	deleteTopics := func(version int16) *kmsg.DeleteTopicsRequest {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version, req.TimeoutMillis = version, 5000
		if version >= 6 {
			dt := kmsg.NewDeleteTopicsRequestTopic()
			dt.Topic = kmsg.StringPtr("nope")
			req.Topics = []kmsg.DeleteTopicsRequestTopic{dt}
		} else {
			req.TopicNames = []string{"nope"}
		}
		return req
	}
	deleteItem := func(r kmsg.Response) (int16, *string) {
		rt := r.(*kmsg.DeleteTopicsResponse).Topics[0]
		return rt.ErrorCode, rt.ErrorMessage
	}
	produce := func(version int16) *kmsg.ProduceRequest {
		req := produceRequest(version, goodBatch(t))
		req.Topics[0].Topic = "nope"
		return req
	}
	produceItem := func(r kmsg.Response) (int16, *string) {
		rp := r.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		return rp.ErrorCode, rp.ErrorMessage
	}
	describeCluster := kmsg.NewPtrDescribeClusterRequest()
	describeCluster.Version = 1

	for _, c := range []refusedCase{
		{"deny by role", reader, alterConfigs, kerr.TopicAuthorizationFailed.Code,
			`principal "reader" has role read; AlterConfigs needs admin`, alterItem},
		{"deny by role, whole request", reader, createTopics(7, "orders"), kerr.TopicAuthorizationFailed.Code,
			`principal "reader" has role read; CreateTopics needs admin`, createItem},
		{"deny by prefix", payer, describeConfigs, kerr.TopicAuthorizationFailed.Code, `"events"`,
			func(r kmsg.Response) (int16, *string) {
				rr := r.(*kmsg.DescribeConfigsResponse).Resources[0]
				return rr.ErrorCode, rr.ErrorMessage
			}},
		{"not ready", loading, describeCluster, kerr.LeaderNotAvailable.Code, "loading the cluster's metadata",
			func(r kmsg.Response) (int16, *string) {
				d := r.(*kmsg.DescribeClusterResponse)
				return d.ErrorCode, d.ErrorMessage
			}},
		{"unsupported version", open, createTopics(1, "orders"), kerr.UnsupportedVersion.Code,
			"CreateTopics v1 is not served: PyStream serves v2 to v7", createItem},
		{"unknown topic, Produce", open, produce(9), kerr.UnknownTopicOrPartition.Code, "no such topic", produceItem},
		{"unknown topic, Produce without the field", open, produce(7), kerr.UnknownTopicOrPartition.Code, "", produceItem},
		{"topic exists, CreateTopics", open, createTopics(7, "events"), kerr.TopicAlreadyExists.Code, "events", createItem},
		{"bad name, CreateTopics", open, createTopics(7, "no/slash"), kerr.InvalidTopicException.Code, "no/slash", createItem},
		{"unknown topic, DeleteTopics", open, deleteTopics(6), kerr.UnknownTopicOrPartition.Code, `"nope"`, deleteItem},
		{"unknown topic, DeleteTopics without the field", open, deleteTopics(4), kerr.UnknownTopicOrPartition.Code, "", deleteItem},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := roundTrip(t, c.conn(), c.req, c.req.GetVersion())
			code, msg := c.item(resp)
			require.Equal(t, c.code, code, "%v", msg)
			if c.message == "" {
				require.Nil(t, msg, "the version has no ErrorMessage: none encoded")
				return
			}
			require.NotNil(t, msg)
			require.Contains(t, *msg, c.message)
		})
	}

	// The refusals of answers without an ErrorMessage are coded as
	// before: Fetch and ListOffsets of an unknown topic.
	nc := open()
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxWaitMillis, fetch.MaxBytes = 12, 0, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "nope"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	fetch.Topics = []kmsg.FetchRequestTopic{ft}
	require.Equal(t, kerr.UnknownTopicOrPartition.Code, roundTrip(t, nc, fetch, 12).(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode)
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 7
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "nope"
	lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{kmsg.NewListOffsetsRequestTopicPartition()}
	lo.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	require.Equal(t, kerr.UnknownTopicOrPartition.Code, roundTrip(t, nc, lo, 7).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode)
}

// loadingNode is a node of a cluster of processes still replaying its
// metadata (notready_test.go's replaying), dialed.
func loadingNode(t *testing.T) func() net.Conn {
	f := start(t, 1, 1, 1)
	var coordinator atomic.Int32
	coordinator.Store(1)
	var replay atomic.Bool
	replay.Store(true)
	var srv *kafka.Server
	dir := replaying{nodeDirectory{Local: embedded(f.c), self: func() string { return srv.Addr(1) }, coordinator: &coordinator}, &replay}
	srv, err := kafka.New(dir, kafka.Config{Host: "127.0.0.1", NodeID: 1})
	require.NoError(t, err)
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(c) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	srv.Reconcile()
	return func() net.Conn { return f.dialAddr(t, srv.Addr(1)) }
}

// TestKafkaRefusalsLoggedOnce: each refused request is one line of the
// server's log — its API, correlation id, client id, first code and
// message, and how many items were refused — however many items it
// refuses; a request served without refusal writes none. A request for
// the coordinator on another node is NOT_COORDINATOR, its line naming
// that node, at Debug: a routine step every client retries.
func TestKafkaRefusalsLoggedOnce(t *testing.T) {
	logs := &syncLog{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := start(t, 1, 1, 1, func(c *kafka.Config) { c.Logger = logger })
	nc := f.dial(t, 1)

	// Three unknown topics' partitions: one line, items=3.
	req := produceRequest(9, goodBatch(t))
	req.Topics[0].Topic = "nope"
	second := req.Topics[0].Partitions[0]
	second.Partition = 1
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, second)
	other := req.Topics[0]
	other.Topic = "nada"
	other.Partitions = other.Partitions[:1]
	req.Topics = append(req.Topics, other)
	roundTrip(t, nc, req, 9)
	require.Equal(t, 1, logs.count("kafka request refused"))
	line := logs.line("kafka request refused")
	for _, want := range []string{"level=INFO", "api=Produce", "version=9", "correlation_id=7", "client_id=raw",
		"code=UNKNOWN_TOPIC_OR_PARTITION", `message="no such topic`, "items=3"} {
		require.Contains(t, line, want)
	}

	// Served: no line.
	ok := produceRequest(9, goodBatch(t))
	require.Zero(t, roundTrip(t, nc, ok, 9).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode)
	require.Equal(t, 1, logs.count("kafka request refused"))

	// A version not served, the whole request: one line more.
	cr := kmsg.NewPtrCreateTopicsRequest()
	cr.Version = 1
	roundTrip(t, nc, cr, 1)
	require.Equal(t, 2, logs.count("kafka request refused"))
	require.Equal(t, 1, logs.count("code=UNSUPPORTED_VERSION"))
	require.Equal(t, 1, logs.count("CreateTopics v1 is not served"))

	// NOT_COORDINATOR on a node of a cluster of processes whose
	// coordinator is node 2: the line names it.
	var coordinator atomic.Int32
	coordinator.Store(2)
	node := notCoordinatorNode(t, f, &coordinator, logger)
	require.Equal(t, kerr.NotCoordinator.Code, rawHeartbeat(t, node, "g", "m", nil, 1))
	require.Equal(t, 3, logs.count("kafka request refused"))
	require.Equal(t, 1, logs.count("node 2 coordinates groups and transactions"))
	require.Contains(t, logs.line("api=Heartbeat"), "code=NOT_COORDINATOR")
	require.Contains(t, logs.line("api=Heartbeat"), "level=DEBUG")
}

// notCoordinatorNode is groups_node_test.go's nodeListener logging to
// logger, dialed.
func notCoordinatorNode(t *testing.T, f *fixture, coordinator *atomic.Int32, logger *slog.Logger) net.Conn {
	t.Helper()
	var srv *kafka.Server
	dir := nodeDirectory{Local: embedded(f.c), self: func() string { return srv.Addr(1) }, coordinator: coordinator}
	srv, err := kafka.New(dir, kafka.Config{Host: "127.0.0.1", NodeID: 1, Logger: logger})
	require.NoError(t, err)
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(c) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	srv.Reconcile()
	return f.dialAddr(t, srv.Addr(1))
}

// line is the first line holding s, "" if none.
func (l *syncLog) line(s string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}
