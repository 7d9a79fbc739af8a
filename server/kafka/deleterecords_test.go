package kafka_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// sendTo writes n records "r<from>".."r<from+n-1>" to events/0 through
// the cluster.
func sendTo(t *testing.T, c *cluster.Cluster, from, n int) {
	t.Helper()
	var msgs []topic.Message
	for i := from; i < from+n; i++ {
		msgs = append(msgs, topic.Message{Payload: fmt.Appendf(nil, "r%d", i)})
	}
	_, err := cluster.NewProducer(c, "events").SendBatchTo(0, msgs)
	require.NoError(t, err)
}

// consumeFromStart reads events/0 from its earliest offset with a new kgo
// consumer until it has n records, and returns their values.
func consumeFromStart(t *testing.T, f *fixture, n int) []string {
	t.Helper()
	cons := f.client(t, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	c := ctx(t)
	for len(got) < n {
		fs := cons.PollFetches(c)
		require.NoError(t, c.Err(), "read %v", got)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// startOffset is events/0's earliest offset as kadm lists it.
func startOffset(t *testing.T, adm *kadm.Client) int64 {
	t.Helper()
	lo, err := adm.ListStartOffsets(ctx(t), "events")
	require.NoError(t, err)
	o, ok := lo.Lookup("events", 0)
	require.True(t, ok)
	require.NoError(t, o.Err)
	return o.Offset
}

// TestKafkaDeleteRecordsKadm: kadm's DeleteRecords raises the log start on
// every replica; ListOffsets(earliest) and a consumer from the start then
// begin there; a lower offset answers the current log start and changes
// nothing; -1 is the high watermark.
func TestKafkaDeleteRecordsKadm(t *testing.T) {
	f := start(t, 3, 1, 3)
	sendTo(t, f.c, 0, 10)
	adm := f.admin(t)

	del := func(at int64) kadm.DeleteRecordsResponse {
		t.Helper()
		rs, err := adm.DeleteRecords(ctx(t), kadm.Offsets{"events": {0: {Topic: "events", Partition: 0, At: at}}})
		require.NoError(t, err)
		r, ok := rs.Lookup("events", 0)
		require.True(t, ok)
		return r
	}
	r := del(4)
	require.NoError(t, r.Err)
	require.Equal(t, int64(4), r.LowWatermark)
	require.Equal(t, int64(4), startOffset(t, adm))
	got := consumeFromStart(t, f, 6)
	require.Equal(t, []string{"r4", "r5", "r6", "r7", "r8", "r9"}, got)

	r = del(2) // below the log start: the current one, unchanged
	require.NoError(t, r.Err)
	require.Equal(t, int64(4), r.LowWatermark)
	require.Equal(t, int64(4), startOffset(t, adm))

	r = del(-1) // the high watermark
	require.NoError(t, r.Err)
	require.Equal(t, int64(10), r.LowWatermark)
	require.Equal(t, int64(10), startOffset(t, adm))

	sendTo(t, f.c, 10, 2)
	require.Equal(t, []string{"r10", "r11"}, consumeFromStart(t, f, 2))
}

// TestKafkaDeleteRecordsSarama: sarama's ClusterAdmin.DeleteRecords
// raises the log start, which ListOffsets(earliest) then answers; an
// offset past the high watermark is refused OFFSET_OUT_OF_RANGE.
func TestKafkaDeleteRecordsSarama(t *testing.T) {
	f := start(t, 2, 1, 2)
	sendTo(t, f.c, 0, 8)
	ca, err := sarama.NewClusterAdminFromClient(f.saramaClient(t))
	require.NoError(t, err)
	require.NoError(t, ca.DeleteRecords("events", map[int32]int64{0: 5}))
	cl := f.saramaClient(t)
	off, err := cl.GetOffset("events", 0, sarama.OffsetOldest)
	require.NoError(t, err)
	require.Equal(t, int64(5), off)
	require.ErrorIs(t, ca.DeleteRecords("events", map[int32]int64{0: 9}), sarama.ErrOffsetOutOfRange)
	off, err = cl.GetOffset("events", 0, sarama.OffsetOldest)
	require.NoError(t, err)
	require.Equal(t, int64(5), off, "a refusal changes nothing")
}

// deleteRecordsReq is a DeleteRecords of offset at on each partition.
func deleteRecordsReq(v int16, topicName string, at int64, parts ...int32) *kmsg.DeleteRecordsRequest {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version = v
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topicName
	for _, p := range parts {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = p, at
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.DeleteRecordsRequestTopic{rt}
	return req
}

// TestKafkaDeleteRecordsRefusals: each version answers per partition:
// OFFSET_OUT_OF_RANGE above the high watermark and for a negative offset
// other than -1, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER from a
// broker that does not lead the partition; none moves the log start.
func TestKafkaDeleteRecordsRefusals(t *testing.T) {
	f := start(t, 2, 1, 1)
	sendTo(t, f.c, 0, 3)
	st, err := f.c.Status("events", 0)
	require.NoError(t, err)
	other := 3 - st.Leader
	for v := int16(0); v <= 2; v++ {
		one := func(broker int, topicName string, at int64, part int32) kmsg.DeleteRecordsResponseTopicPartition {
			resp := roundTrip(t, f.dial(t, broker), deleteRecordsReq(v, topicName, at, part), v).(*kmsg.DeleteRecordsResponse)
			require.Len(t, resp.Topics, 1)
			require.Len(t, resp.Topics[0].Partitions, 1)
			return resp.Topics[0].Partitions[0]
		}
		for name, c := range map[string]struct {
			broker int
			topic  string
			at     int64
			part   int32
			code   int16
		}{
			"past the high watermark": {st.Leader, "events", 4, 0, kerr.OffsetOutOfRange.Code},
			"negative":                {st.Leader, "events", -2, 0, kerr.OffsetOutOfRange.Code},
			"unknown partition":       {st.Leader, "events", 1, 3, kerr.UnknownTopicOrPartition.Code},
			"unknown topic":           {st.Leader, "nope", 1, 0, kerr.UnknownTopicOrPartition.Code},
			"not the leader":          {other, "events", 1, 0, kerr.NotLeaderForPartition.Code},
		} {
			rp := one(c.broker, c.topic, c.at, c.part)
			require.Equal(t, c.code, rp.ErrorCode, "v%d %s", v, name)
			require.Equal(t, int64(-1), rp.LowWatermark, "v%d %s", v, name)
		}
		ls, _, err := f.c.Bounds("events", 0)
		require.NoError(t, err)
		require.Equal(t, uint64(0), ls, "v%d: no refusal moves the log start", v)
	}
	rp := roundTrip(t, f.dial(t, st.Leader), deleteRecordsReq(2, "events", 3, 0), 2).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
	require.Equal(t, int16(0), rp.ErrorCode)
	require.Equal(t, int64(3), rp.LowWatermark, "the high watermark itself is allowed")
}

// TestKafkaDeleteRecordsAuthz: DeleteRecords needs the admin role (Kafka's
// DELETE on the topic): a reader is refused TOPIC_AUTHORIZATION_FAILED.
func TestKafkaDeleteRecordsAuthz(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	sendTo(t, s.c, 0, 3)
	for who, code := range map[string]int16{"reader": kerr.TopicAuthorizationFailed.Code, "writer": kerr.TopicAuthorizationFailed.Code, "ops": 0} {
		nc := s.dial(t, 1)
		plainAuth(t, nc, who)
		rp := roundTrip(t, nc, deleteRecordsReq(2, "events", 1, 0), 2).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
		require.Equal(t, code, rp.ErrorCode, who)
	}
	ls, _, err := s.c.Bounds("events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(1), ls)
}

// TestKafkaDeleteRecordsSurvivesRestart: the raised log start is there
// after the cluster is closed and opened again.
func TestKafkaDeleteRecordsSurvivesRestart(t *testing.T) {
	root := t.TempDir()
	open := func() (*cluster.Cluster, *fixture, func()) {
		c, err := cluster.Open(root)
		require.NoError(t, err)
		for id := 1; id <= 2; id++ {
			_, err := c.StartBroker(id)
			require.NoError(t, err)
		}
		if _, err := c.Topic("events"); err != nil {
			require.NoError(t, c.CreateTopic("events", 1, 2))
		}
		srv, err := kafka.New(embedded(c), kafka.Config{Host: "127.0.0.1"})
		require.NoError(t, err)
		cctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(cctx) }()
		srv.Reconcile()
		return c, &fixture{c: c, srv: srv}, func() {
			cancel()
			require.NoError(t, <-done)
			require.NoError(t, c.Close())
		}
	}
	c, f, stop := open()
	sendTo(t, c, 0, 6)
	rs, err := f.admin(t).DeleteRecords(ctx(t), kadm.Offsets{"events": {0: {Topic: "events", Partition: 0, At: 4}}})
	require.NoError(t, err)
	r, _ := rs.Lookup("events", 0)
	require.NoError(t, r.Err)
	require.Equal(t, int64(4), r.LowWatermark)
	stop()

	_, f, stop = open()
	defer stop()
	require.Equal(t, int64(4), startOffset(t, f.admin(t)))
	require.Equal(t, []string{"r4", "r5"}, consumeFromStart(t, f, 2))
}
