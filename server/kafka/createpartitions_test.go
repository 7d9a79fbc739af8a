package kafka_test

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/bounds"
)

// partitionCount is topic's partition count as Metadata answers it to a
// fresh kadm client.
func partitionCount(t *testing.T, adm *kadm.Client, topic string) int {
	t.Helper()
	md, err := adm.Metadata(ctx(t), topic)
	require.NoError(t, err)
	td, ok := md.Topics[topic]
	require.True(t, ok)
	require.NoError(t, td.Err)
	return len(td.Partitions)
}

// TestKafkaAdminCreatePartitions: kadm grows a topic (CreatePartitions
// adds, UpdatePartitions sets the total); Metadata lists the new
// partitions, each with a leader; a record produced to a new partition
// is consumed back from it; validate_only changes nothing; each refusal
// has its code and a message.
func TestKafkaAdminCreatePartitions(t *testing.T) {
	f := start(t, 3, 2, 2)
	adm := f.admin(t)

	res, err := adm.CreatePartitions(ctx(t), 2, "events")
	require.NoError(t, err)
	require.NoError(t, res["events"].Err)
	require.Equal(t, 4, partitionCount(t, kadm.NewClient(f.client(t)), "events"))
	info, err := f.c.Topic("events")
	require.NoError(t, err)
	require.Equal(t, 4, info.PartitionCount)

	cl := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		"events": {3: kgo.NewOffset().AtStart()},
	}))
	rec := &kgo.Record{Topic: "events", Partition: 3, Key: []byte("k"), Value: []byte("on a new partition")}
	require.NoError(t, cl.ProduceSync(ctx(t), rec).FirstErr())
	require.Equal(t, int32(3), rec.Partition)
	fs := cl.PollFetches(ctx(t))
	require.NoError(t, fs.Err())
	got := fs.Records()
	require.Len(t, got, 1)
	require.Equal(t, int32(3), got[0].Partition)
	require.Equal(t, "on a new partition", string(got[0].Value))

	vres, err := adm.ValidateUpdatePartitions(ctx(t), 6, "events")
	require.NoError(t, err)
	require.NoError(t, vres["events"].Err)
	require.Equal(t, 4, partitionCount(t, adm, "events"), "validate_only grows nothing")

	ures, err := adm.UpdatePartitions(ctx(t), 5, "events")
	require.NoError(t, err)
	require.NoError(t, ures["events"].Err)
	require.Equal(t, 5, partitionCount(t, kadm.NewClient(f.client(t)), "events"))

	for _, tc := range []struct {
		count    int
		validate bool
		want     *kerr.Error
		msg      string
	}{
		{5, false, kerr.InvalidPartitions, "has 5 partition(s)"},
		{3, true, kerr.InvalidPartitions, "can only be added to"},
		{bounds.MaxTopicPartitions + 1, false, kerr.InvalidPartitions, "at most 1024"},
	} {
		var r kadm.CreatePartitionsResponses
		if tc.validate {
			r, err = adm.ValidateUpdatePartitions(ctx(t), tc.count, "events")
		} else {
			r, err = adm.UpdatePartitions(ctx(t), tc.count, "events")
		}
		require.NoError(t, err)
		require.ErrorIs(t, r["events"].Err, tc.want, "count %d", tc.count)
		require.Contains(t, r["events"].ErrMessage, tc.msg)
	}
	require.Equal(t, 5, partitionCount(t, adm, "events"), "a refusal grows nothing")
}

// TestKafkaSaramaCreatePartitions: sarama's ClusterAdmin grows a topic,
// which its client then lists with the new count; a count not larger is
// refused with INVALID_PARTITIONS, and an assignment with
// INVALID_REPLICA_ASSIGNMENT.
func TestKafkaSaramaCreatePartitions(t *testing.T) {
	f := start(t, 3, 1, 3)
	sa, err := sarama.NewClusterAdminFromClient(f.saramaClient(t))
	require.NoError(t, err)
	require.NoError(t, sa.CreatePartitions("events", 3, nil, false))
	cl := f.saramaClient(t)
	parts, err := cl.Partitions("events")
	require.NoError(t, err)
	require.Len(t, parts, 3)
	for _, p := range parts {
		leader, err := cl.Leader("events", p)
		require.NoError(t, err)
		require.NotNil(t, leader)
	}
	prod, err := sarama.NewSyncProducerFromClient(cl)
	require.NoError(t, err)
	defer func() { _ = prod.Close() }()
	part, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "events", Partition: 2, Value: sarama.StringEncoder("new")})
	require.NoError(t, err)
	require.Equal(t, int32(2), part)
	require.Zero(t, off)

	require.ErrorIs(t, sa.CreatePartitions("events", 3, nil, false), sarama.ErrInvalidPartitions)
	require.ErrorIs(t, sa.CreatePartitions("events", 4, [][]int32{{1, 2, 3}}, false), sarama.ErrInvalidReplicaAssignment)
	require.ErrorIs(t, sa.CreatePartitions("nope", 4, nil, false), sarama.ErrUnknownTopicOrPartition)
	require.NoError(t, sa.CreatePartitions("events", 5, nil, true))
	info, err := f.c.Topic("events")
	require.NoError(t, err)
	require.Equal(t, 3, info.PartitionCount, "refusals and validate_only grow nothing")
}

// TestKafkaCreatePartitionsRaw: the refusals a client library would not
// send — a topic named twice, unknown topics, too many topics — each with
// its code and a message, and nothing grown.
func TestKafkaCreatePartitionsRaw(t *testing.T) {
	f := start(t, 1, 1, 1)
	require.NoError(t, f.c.CreateTopicWithConfig("other", 1, 1, nil))
	nc := f.dial(t, 1)
	topicOf := func(name string, count int32) kmsg.CreatePartitionsRequestTopic {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = name, count
		return rt
	}
	for _, v := range []int16{0, 3} {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.Version, req.TimeoutMillis = v, 5000
		req.Topics = []kmsg.CreatePartitionsRequestTopic{topicOf("events", 2), topicOf("events", 3), topicOf("missing", 2), topicOf("bad name", 2), topicOf("other", 0)}
		resp := roundTrip(t, nc, req, v).(*kmsg.CreatePartitionsResponse)
		require.Len(t, resp.Topics, 5)
		want := []int16{kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.InvalidPartitions.Code}
		for i, rt := range resp.Topics {
			require.Equal(t, want[i], rt.ErrorCode, "v%d topic %s", v, rt.Topic)
			require.NotNil(t, rt.ErrorMessage)
			require.NotEmpty(t, *rt.ErrorMessage)
		}
	}
	info, err := f.c.Topic("events")
	require.NoError(t, err)
	require.Equal(t, 1, info.PartitionCount)

	big := kmsg.NewPtrCreatePartitionsRequest()
	big.Version = 3
	for range bounds.MaxCreateTopics + 1 {
		big.Topics = append(big.Topics, topicOf("events", 2))
	}
	resp := roundTrip(t, nc, big, 3).(*kmsg.CreatePartitionsResponse)
	require.Len(t, resp.Topics, bounds.MaxCreateTopics+1)
	require.Equal(t, kerr.InvalidRequest.Code, resp.Topics[0].ErrorCode)

	many := kmsg.NewPtrCreatePartitionsRequest()
	many.Version = 3
	many.Topics = []kmsg.CreatePartitionsRequestTopic{topicOf("events", bounds.MaxTopicPartitions), topicOf("other", 3)}
	resp = roundTrip(t, nc, many, 3).(*kmsg.CreatePartitionsResponse)
	for _, rt := range resp.Topics {
		require.Equal(t, kerr.PolicyViolation.Code, rt.ErrorCode, rt.Topic)
		require.Contains(t, *rt.ErrorMessage, "add at most")
	}
	info, err = f.c.Topic("other")
	require.NoError(t, err)
	require.Equal(t, 1, info.PartitionCount, "a request past the bound grows nothing")
}

// TestKafkaCreatePartitionsAuthz: growing a topic needs the admin role
// (a writer's request is TOPIC_AUTHORIZATION_FAILED whole), and an
// administrator limited to prefixes grows only the topics it reaches,
// the others answered TOPIC_AUTHORIZATION_FAILED with a message.
func TestKafkaCreatePartitionsAuthz(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	require.NoError(t, s.c.CreateTopicWithConfig("payments", 1, 1, nil))

	writer := kadm.NewClient(s.as(t, auth.MechanismPlain, "writer"))
	res, err := writer.UpdatePartitions(ctx(t), 2, "payments")
	require.NoError(t, err)
	require.ErrorIs(t, res["payments"].Err, kerr.TopicAuthorizationFailed)

	payops := kadm.NewClient(s.as(t, auth.MechanismPlain, "payops"))
	res, err = payops.UpdatePartitions(ctx(t), 2, "payments", "events")
	require.NoError(t, err)
	require.NoError(t, res["payments"].Err)
	require.ErrorIs(t, res["events"].Err, kerr.TopicAuthorizationFailed)
	require.Contains(t, res["events"].ErrMessage, "may not reach")
	for name, want := range map[string]int{"payments": 2, "events": 1} {
		info, err := s.c.Topic(name)
		require.NoError(t, err)
		require.Equal(t, want, info.PartitionCount, name)
	}
}

// TestKafkaCreatePartitionsGroupRebalance: a kgo group consumer takes the
// new partitions without restarting: its leader's metadata refresh sees
// the count change and the group rebalances, so a record produced to a
// new partition is consumed. (A short fetch wait only spares the test the
// 5 s a fetch in flight on the old partition would hold the rejoin.)
func TestKafkaCreatePartitionsGroupRebalance(t *testing.T) {
	f := startGroups(t, 1, 1, 1)
	consumer := f.client(t, kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMaxAge(100*time.Millisecond),
		kgo.SessionTimeout(2*time.Second), kgo.HeartbeatInterval(50*time.Millisecond), kgo.RebalanceTimeout(5*time.Second), kgo.FetchMaxWait(100*time.Millisecond))
	producer := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MetadataMaxAge(100*time.Millisecond))
	require.NoError(t, producer.ProduceSync(ctx(t), &kgo.Record{Topic: "events", Partition: 0, Value: []byte("old")}).FirstErr())
	poll := func(want int32) {
		t.Helper()
		c := ctx(t)
		for c.Err() == nil {
			fs := consumer.PollFetches(c)
			for _, r := range fs.Records() {
				if r.Partition == want {
					return
				}
			}
		}
		t.Fatalf("no record of partition %d consumed", want)
	}
	poll(0)

	res, err := f.admin(t).UpdatePartitions(ctx(t), 2, "events")
	require.NoError(t, err)
	require.NoError(t, res["events"].Err)
	fresh := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, fresh.ProduceSync(ctx(t), &kgo.Record{Topic: "events", Partition: 1, Value: []byte("new")}).FirstErr())
	poll(1)
}
