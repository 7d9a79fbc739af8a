package kafka_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/log/logtest"
)

// TestKafkaFailoverStoppedBrokerCloses: stopping the leader's broker
// closes its listener (a client's connection fails); after a failover
// (by hand: no controller runs here) the same kgo client finds the new
// leader through Metadata and carries on, and a consumer reads every
// acknowledged record exactly once.
func TestKafkaFailoverStoppedBrokerCloses(t *testing.T) {
	f := start(t, 3, 1, 3)
	prod := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(8*time.Second))
	send := func(from, to int) {
		for i := from; i < to; i++ {
			r := &kgo.Record{Topic: "events", Partition: 0, Value: fmt.Appendf(nil, "r%d", i)}
			require.NoError(t, prod.ProduceSync(ctx(t), r).FirstErr(), "record %d", i)
		}
	}
	send(0, 5)

	st, err := f.c.Status("events", 0)
	require.NoError(t, err)
	old := st.Leader
	addr := f.srv.Addr(old)
	require.NoError(t, f.c.StopBroker(old))
	f.srv.Reconcile()
	require.Empty(t, f.srv.Addr(old), "a stopped broker has no listener")
	_, err = net.DialTimeout("tcp", addr, time.Second)
	require.Error(t, err, "its port refuses connections")

	_, err = f.c.Failover("events", 0)
	require.NoError(t, err)
	send(5, 10)
	st, err = f.c.Status("events", 0)
	require.NoError(t, err)
	require.NotEqual(t, old, st.Leader)

	cons := f.client(t, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	c := ctx(t)
	for len(got) < 10 {
		fs := cons.PollFetches(c)
		require.NoError(t, c.Err(), "read %v", got)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		require.Equal(t, fmt.Sprintf("r%d", i), v)
	}

	// Started again, the broker listens on its port again.
	_, err = f.c.StartBroker(old)
	require.NoError(t, err)
	logtest.WaitFor(t, 5*time.Second, "listener of the restarted broker", func() (bool, string) {
		return f.srv.Addr(old) == addr, "listening on " + f.srv.Addr(old)
	})
}

// TestKafkaListOffsetsEarliestLatest: earliest is the log start, latest
// the high watermark, a time before every record the first offset, and a
// request to a broker that does not lead the partition is
// NOT_LEADER_OR_FOLLOWER.
func TestKafkaListOffsetsEarliestLatest(t *testing.T) {
	f := start(t, 2, 1, 1)
	before := time.Now().Add(-time.Minute).UnixMilli()
	prod := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 3; i++ {
		require.NoError(t, prod.ProduceSync(ctx(t), &kgo.Record{Topic: "events", Value: []byte("x")}).FirstErr())
	}
	st, err := f.c.Status("events", 0)
	require.NoError(t, err)
	other := 3 - st.Leader

	list := func(broker int, ts int64) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = 7
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Timestamp = ts
		tp := kmsg.NewListOffsetsRequestTopic()
		tp.Topic, tp.Partitions = "events", []kmsg.ListOffsetsRequestTopicPartition{p}
		req.Topics = []kmsg.ListOffsetsRequestTopic{tp}
		return roundTrip(t, f.dial(t, broker), req, 7).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	require.Equal(t, int64(0), list(st.Leader, -2).Offset)
	require.Equal(t, int64(3), list(st.Leader, -1).Offset)
	require.Equal(t, int64(0), list(st.Leader, before).Offset)
	require.Equal(t, int64(-1), list(st.Leader, time.Now().Add(time.Hour).UnixMilli()).Offset)
	require.Equal(t, int16(6), list(other, -1).ErrorCode, "NOT_LEADER_OR_FOLLOWER")
}
