package kafka_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// epochAsk is one partition of an OffsetForLeaderEpoch request.
type epochAsk struct {
	topic           string
	partition       int32
	current, leader int32
}

// offsetForLeaderEpoch sends one OffsetForLeaderEpoch of version v to
// broker and returns the partitions' answers in order.
func offsetForLeaderEpoch(t *testing.T, f *fixture, broker int, v int16, asks ...epochAsk) []kmsg.OffsetForLeaderEpochResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version, req.ReplicaID = v, -1
	for _, a := range asks {
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = a.topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = a.partition, a.current, a.leader
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp := roundTrip(t, f.dial(t, broker), req, v).(*kmsg.OffsetForLeaderEpochResponse)
	var out []kmsg.OffsetForLeaderEpochResponseTopicPartition
	for _, rt := range resp.Topics {
		out = append(out, rt.Partitions...)
	}
	require.Len(t, out, len(asks))
	return out
}

// TestKafkaOffsetForLeaderEpochTwoEpochs: after a leader move, the new
// leader answers each epoch's end from its leader-epoch history as Kafka's
// cache does — the old epoch ends where the new one's records start, the
// current one at the log end, an epoch older than the history with the
// first epoch's start, a newer one undefined — and refuses a fenced or
// unknown current epoch, an unknown partition, and a broker that does not
// lead; after DeleteRecords the old epoch starts at the new log start.
func TestKafkaOffsetForLeaderEpochTwoEpochs(t *testing.T) {
	f := start(t, 2, 1, 2)
	sendTo(t, f.c, 0, 5)
	st, err := f.c.Status("events", 0)
	require.NoError(t, err)
	e1, old := int32(st.LeaderEpoch), st.Leader
	_, err = f.c.MoveLeader("events", 0, 3-old)
	require.NoError(t, err)
	sendTo(t, f.c, 5, 3)
	st, err = f.c.Status("events", 0)
	require.NoError(t, err)
	e2, leader := int32(st.LeaderEpoch), st.Leader
	require.Greater(t, e2, e1)

	got := offsetForLeaderEpoch(t, f, leader, 4,
		epochAsk{"events", 0, e2, e1},
		epochAsk{"events", 0, e2, e2},
		epochAsk{"events", 0, -1, e2 + 1},
		epochAsk{"events", 0, -1, -1},
		epochAsk{"events", 0, e1, e2},
		epochAsk{"events", 0, e2 + 1, e2},
		epochAsk{"events", 7, -1, e2},
		epochAsk{"nope", 0, -1, e2},
	)
	type answer struct {
		code  int16
		epoch int32
		end   int64
	}
	var answers []answer
	for _, g := range got {
		answers = append(answers, answer{g.ErrorCode, g.LeaderEpoch, g.EndOffset})
	}
	require.Equal(t, []answer{
		{0, e1, 5},
		{0, e2, 8},
		{0, -1, -1},
		{0, -1, -1},
		{kerr.FencedLeaderEpoch.Code, -1, -1},
		{kerr.UnknownLeaderEpoch.Code, -1, -1},
		{kerr.UnknownTopicOrPartition.Code, -1, -1},
		{kerr.UnknownTopicOrPartition.Code, -1, -1},
	}, answers)
	if e1 > 0 {
		g := offsetForLeaderEpoch(t, f, leader, 4, epochAsk{"events", 0, -1, e1 - 1})[0]
		require.Equal(t, answer{0, e1 - 1, 0}, answer{g.ErrorCode, g.LeaderEpoch, g.EndOffset}, "older than the history: its first epoch's start")
	}
	g := offsetForLeaderEpoch(t, f, old, 4, epochAsk{"events", 0, -1, e1})[0]
	require.Equal(t, kerr.NotLeaderForPartition.Code, g.ErrorCode)

	// v0 has no epoch in its answer, v1 no current epoch to check.
	g = offsetForLeaderEpoch(t, f, leader, 0, epochAsk{"events", 0, e1, e1})[0]
	require.Equal(t, int16(0), g.ErrorCode)
	require.Equal(t, int64(5), g.EndOffset)
	g = offsetForLeaderEpoch(t, f, leader, 1, epochAsk{"events", 0, e1, e1})[0]
	require.Equal(t, answer{0, e1, 5}, answer{g.ErrorCode, g.LeaderEpoch, g.EndOffset})

	// Past the start of e2: e1's records are gone, and e1 is answered as
	// older than the history, e2's start now the log start.
	_, err = f.c.AdvanceLogStart("events", 0, 6, "test")
	require.NoError(t, err)
	g = offsetForLeaderEpoch(t, f, leader, 4, epochAsk{"events", 0, e2, e1})[0]
	require.Equal(t, answer{0, e1, 6}, answer{g.ErrorCode, g.LeaderEpoch, g.EndOffset})
}

// TestKafkaOffsetForLeaderEpochKgoFailover: a kgo consumer that read
// records from the old leader validates its position with
// OffsetForLeaderEpoch after a failover, and keeps consuming, every record
// once and no error.
func TestKafkaOffsetForLeaderEpochKgoFailover(t *testing.T) {
	f := start(t, 3, 1, 3)
	var asked atomic.Int32
	hook := hookWrites(func(key int16) {
		if key == int16(kmsg.OffsetForLeaderEpoch) {
			asked.Add(1)
		}
	})
	cons := f.client(t, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(hook))
	var got []string
	read := func(n int) {
		t.Helper()
		c := ctx(t)
		for len(got) < n {
			fs := cons.PollFetches(c)
			require.NoError(t, c.Err(), "read %v", got)
			fs.EachError(func(topic string, p int32, err error) {
				require.NoError(t, err, "%s/%d", topic, p)
			})
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
	}
	sendTo(t, f.c, 0, 5)
	read(5)

	st, err := f.c.Status("events", 0)
	require.NoError(t, err)
	require.NoError(t, f.c.StopBroker(st.Leader))
	f.srv.Reconcile()
	_, err = f.c.Failover("events", 0)
	require.NoError(t, err)
	sendTo(t, f.c, 5, 5)
	read(10)
	for i, v := range got {
		require.Equal(t, fmt.Sprintf("r%d", i), v)
	}
	require.Positive(t, asked.Load(), "the consumer checked its position with OffsetForLeaderEpoch")

}

// hookWrites is a kgo hook that reports the key of every request the
// client writes.
type hookWrites func(key int16)

// OnBrokerWrite is kgo.HookBrokerWrite.
func (h hookWrites) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	h(key)
}
