package kafka_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceN writes n records to partition p of "events".
func (f *fixture) produceN(t *testing.T, cl *kgo.Client, p int32, n int) {
	t.Helper()
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: []byte("v")})
	}
	require.NoError(t, cl.ProduceSync(ctx(t), recs...).FirstErr())
}

// TestKafkaOffsetsCommitFetchWithoutGroup: kadm commits offsets for a
// group it never joined (generation -1, no member) and fetches them
// back; they are PyStream's durable offsets of the consumer of that id,
// and an offset committed there is fetched through Kafka. Reference:
// docs/kafka-admin.md § Committed offsets without a group.
func TestKafkaOffsetsCommitFetchWithoutGroup(t *testing.T) {
	f := start(t, 1, 2, 1)
	cl := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	f.produceN(t, cl, 0, 5)
	f.produceN(t, cl, 1, 2)
	adm := kadm.NewClient(cl)

	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "events", Partition: 0, At: 3, LeaderEpoch: -1})
	offs.Add(kadm.Offset{Topic: "events", Partition: 1, At: 2, LeaderEpoch: -1})
	committed, err := adm.CommitOffsets(ctx(t), "billing", offs)
	require.NoError(t, err)
	require.NoError(t, committed.Error())
	stored, err := f.c.OffsetStore()
	require.NoError(t, err)
	off, found, err := stored.Load("billing", "events", 0)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, uint64(3), off, "the group id is the consumer id")

	require.NoError(t, f.c.CommitOffset("billing", "events", 0, 4)) // as over HTTP
	fetched, err := adm.FetchOffsets(ctx(t), "billing")
	require.NoError(t, err)
	require.NoError(t, fetched.Error())
	at := func(p int32) int64 { o, _ := fetched.Lookup("events", p); return o.At }
	require.Equal(t, int64(4), at(0))
	require.Equal(t, int64(2), at(1))

	never, err := adm.FetchOffsets(ctx(t), "nobody")
	require.NoError(t, err)
	require.Empty(t, never.Offsets(), "nothing committed: nothing listed")

	// A partition asked for by name that was never committed is -1.
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = "nobody"
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "events", Partitions: []int32{0}}}
	req.Version = 7
	resp, err := req.RequestWith(ctx(t), cl)
	require.NoError(t, err)
	require.Equal(t, int64(-1), resp.Topics[0].Partitions[0].Offset)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
}

// TestKafkaOffsetsCommitRefusals: each refused commit has its code and
// stores nothing (the table of refusals).
// Reference: docs/kafka-admin.md § Committed offsets without a group
func TestKafkaOffsetsCommitRefusals(t *testing.T) {
	f := start(t, 1, 1, 1)
	cl := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	f.produceN(t, cl, 0, 3)
	require.NoError(t, f.c.CommitOffset("billing", "events", 0, 2))

	commit := func(group string, generation int32, member string, topic string, partition int32, offset int64) int16 {
		t.Helper()
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation, req.MemberID = group, generation, member
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = partition, offset
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx(t), cl)
		require.NoError(t, err)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	cases := []struct {
		name       string
		group      string
		generation int32
		member     string
		topic      string
		partition  int32
		offset     int64
		want       *kerr.Error
	}{
		{"beyond the high watermark", "billing", -1, "", "events", 0, 4, kerr.OffsetOutOfRange},
		{"below the committed offset", "billing", -1, "", "events", 0, 1, kerr.OffsetOutOfRange},
		{"negative", "billing", -1, "", "events", 0, -5, kerr.OffsetOutOfRange},
		{"a generation of a group without members", "billing", 3, "", "events", 0, 3, kerr.UnknownMemberID},
		{"a member", "billing", -1, "member-1", "events", 0, 3, kerr.UnknownMemberID},
		{"an invalid consumer id", "bad id", -1, "", "events", 0, 3, kerr.InvalidGroupID},
		{"an unknown topic", "billing", -1, "", "nope", 0, 0, kerr.UnknownTopicOrPartition},
		{"an unknown partition", "billing", -1, "", "events", 7, 0, kerr.UnknownTopicOrPartition},
	}
	for _, c := range cases {
		got := commit(c.group, c.generation, c.member, c.topic, c.partition, c.offset)
		require.Equal(t, c.want.Code, got, c.name)
	}
	store, err := f.c.OffsetStore()
	require.NoError(t, err)
	off, _, err := store.Load("billing", "events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(2), off, "no refused commit stored anything")
	require.Zero(t, commit("billing", -1, "", "events", 0, 3), "the end itself is a valid commit")
}

// TestKafkaFindCoordinator: any broker coordinates any group and any
// transactional id and answers itself; a share group (key type 2) is
// INVALID_REQUEST.
func TestKafkaFindCoordinator(t *testing.T) {
	f := start(t, 2, 1, 1)
	for _, id := range []int{1, 2} {
		for _, v := range []int16{0, 1, 3, 4} {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version = v
			if v > 0 {
				req.CoordinatorType = int8(v % 2) // groups at v3, transactions at v1 and v4
			}
			req.CoordinatorKey, req.CoordinatorKeys = "billing", []string{"billing"}
			resp := roundTrip(t, f.dial(t, id), req, v).(*kmsg.FindCoordinatorResponse)
			node, code := resp.NodeID, resp.ErrorCode
			if v >= 4 {
				node, code = resp.Coordinators[0].NodeID, resp.Coordinators[0].ErrorCode
			}
			require.Zero(t, code)
			require.Equal(t, int32(id), node, "broker %d v%d", id, v)
		}
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorType, req.CoordinatorKey = 3, 2, "share"
	resp := roundTrip(t, f.dial(t, 1), req, 3).(*kmsg.FindCoordinatorResponse)
	require.Equal(t, kerr.InvalidRequest.Code, resp.ErrorCode)
	require.NotNil(t, resp.ErrorMessage)
}
