package kafka_test

import (
	"fmt"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/pystream/pystream/server/auth"
)

// produceTo writes n records of 100 bytes to one partition of events.
func produceTo(t *testing.T, cl *kgo.Client, partition int32, n int) {
	t.Helper()
	for i := range n {
		r := &kgo.Record{Topic: "events", Partition: partition, Value: fmt.Appendf(nil, "%0100d", i)}
		require.NoError(t, cl.ProduceSync(ctx(t), r).FirstErr())
	}
}

// TestKafkaDescribeLogDirs: kadm asks every broker for its log
// directories, and each describes its own — one directory, named by its
// path relative to the data directory, never the absolute path — with its
// replica of each of the rf-3 topic's partitions; the sizes of the
// partition written grow on every broker, every lag is 0 while the
// followers are caught up, and the file system's space is told (v4). A
// follower taken out of the active set stops receiving records: its lag
// is the records it misses. A filter leaves out what it does not name.
func TestKafkaDescribeLogDirs(t *testing.T) {
	f := start(t, 3, 2, 3)
	adm := f.admin(t)
	prod := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	sizes := func() map[int32]map[int32]int64 {
		all, err := adm.DescribeAllLogDirs(ctx(t), nil)
		require.NoError(t, err)
		out := map[int32]map[int32]int64{}
		for broker := int32(1); broker <= 3; broker++ {
			dirs := all[broker]
			require.Len(t, dirs, 1, "broker %d describes one directory", broker)
			d, ok := dirs[fmt.Sprintf("broker-%06d", broker)]
			require.True(t, ok, "broker %d: %v", broker, dirs)
			require.NoError(t, d.Err)
			require.Equal(t, broker, d.Broker)
			require.Positive(t, d.TotalBytes, "statfs")
			require.GreaterOrEqual(t, d.UsableBytes, int64(0))
			require.LessOrEqual(t, d.UsableBytes, d.TotalBytes)
			require.Len(t, d.Topics, 1)
			require.Len(t, d.Topics["events"], 2, "a replica of each partition")
			out[broker] = map[int32]int64{}
			for p, dp := range d.Topics["events"] {
				require.Zero(t, dp.OffsetLag, "broker %d partition %d: caught up", broker, p)
				require.False(t, dp.IsFuture)
				out[broker][p] = dp.Size
			}
		}
		return out
	}
	before := sizes()
	produceTo(t, prod, 0, 10)
	after := sizes()
	for broker := int32(1); broker <= 3; broker++ {
		require.Greater(t, after[broker][0], before[broker][0]+1000, "broker %d: partition 0 holds the records", broker)
		require.Equal(t, before[broker][1], after[broker][1], "broker %d: partition 1 was not written", broker)
	}

	st, err := f.c.Status("events", 1)
	require.NoError(t, err)
	follower := st.Followers[0]
	_, err = f.c.Deactivate("events", 1, follower)
	require.NoError(t, err)
	produceTo(t, prod, 1, 4)
	dirs, err := adm.DescribeBrokerLogDirs(ctx(t), int32(follower), kadm.TopicsSet{"events": {1: {}}, "nope": {0: {}}})
	require.NoError(t, err)
	d := dirs[fmt.Sprintf("broker-%06d", follower)]
	require.NoError(t, d.Err)
	require.Len(t, d.Topics, 1, "the unknown topic is left out: %v", d.Topics)
	require.Len(t, d.Topics["events"], 1, "only the partition named")
	require.Equal(t, int64(4), d.Topics["events"][1].OffsetLag, "the inactive follower misses 4 records")
	leaderDirs, err := adm.DescribeBrokerLogDirs(ctx(t), int32(st.Leader), kadm.TopicsSet{"events": {1: {}}})
	require.NoError(t, err)
	lp, ok := leaderDirs[fmt.Sprintf("broker-%06d", st.Leader)].Topics.Lookup("events", 1)
	require.True(t, ok)
	require.Zero(t, lp.OffsetLag, "the leader has no lag")
	require.Greater(t, lp.Size, d.Topics["events"][1].Size)
}

// TestKafkaSaramaDescribeLogDirs: sarama's ClusterAdmin.DescribeLogDirs
// (v4 at Kafka 3.3) gets each broker's one directory with its replicas
// and the file system's space.
func TestKafkaSaramaDescribeLogDirs(t *testing.T) {
	f := start(t, 3, 2, 3)
	produceTo(t, f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())), 1, 3)
	cfg := saramaConfig()
	cfg.Version = sarama.V3_3_0_0
	var seeds []string
	for id := 1; id <= 3; id++ {
		seeds = append(seeds, f.srv.Addr(id))
	}
	adm, err := sarama.NewClusterAdmin(seeds, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = adm.Close() })
	all, err := adm.DescribeLogDirs([]int32{1, 2, 3})
	require.NoError(t, err)
	require.Len(t, all, 3)
	for broker, dirs := range all {
		require.Len(t, dirs, 1, "broker %d", broker)
		d := dirs[0]
		require.Equal(t, sarama.ErrNoError, d.ErrorCode)
		require.Equal(t, fmt.Sprintf("broker-%06d", broker), d.Path)
		require.Positive(t, d.TotalBytes)
		require.Len(t, d.Topics, 1)
		require.Equal(t, "events", d.Topics[0].Topic)
		require.Len(t, d.Topics[0].Partitions, 2)
		for _, p := range d.Topics[0].Partitions {
			require.Zero(t, p.OffsetLag)
			if p.PartitionID == 1 {
				require.Positive(t, p.Size, "broker %d holds the records", broker)
			}
		}
	}
}

// TestKafkaDescribeLogDirsRaw: v0 and v3 answer the same replicas, v0-v3
// without the file system's space; an empty topic list describes
// nothing; with an auth file a reader is answered, and a principal
// limited to prefixes is shown only its topics' replicas.
func TestKafkaDescribeLogDirsRaw(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	require.NoError(t, s.c.CreateTopic("payments", 1, 1))
	describe := func(who string, version int16, topics []kmsg.DescribeLogDirsRequestTopic) *kmsg.DescribeLogDirsResponse {
		t.Helper()
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(int16(kmsg.DescribeLogDirs), version)
		cl := s.as(t, auth.MechanismPlain, who, kgo.MaxVersions(vs))
		req := kmsg.NewPtrDescribeLogDirsRequest()
		req.Version, req.Topics = version, topics
		// To broker 1 itself: kgo would shard the request by the
		// topics' leaders, which it asks Metadata for.
		r, err := cl.Broker(1).Request(ctx(t), req)
		require.NoError(t, err)
		resp := r.(*kmsg.DescribeLogDirsResponse)
		require.Equal(t, version, resp.Version)
		return resp
	}
	topicsOf := func(resp *kmsg.DescribeLogDirsResponse) []string {
		require.Len(t, resp.Dirs, 1)
		var names []string
		for _, tp := range resp.Dirs[0].Topics {
			names = append(names, tp.Topic)
		}
		return names
	}
	reader := "reader"
	for _, v := range []int16{0, 3} {
		resp := describe(reader, v, nil)
		require.Zero(t, resp.ErrorCode)
		require.Equal(t, []string{"events", "payments"}, topicsOf(resp), "v%d", v)
		require.Equal(t, "broker-000001", resp.Dirs[0].Dir)
		require.Equal(t, int64(-1), resp.Dirs[0].TotalBytes, "v%d has no field", v)
	}
	require.Empty(t, topicsOf(describe(reader, 4, []kmsg.DescribeLogDirsRequestTopic{})), "an empty list names nothing")
	require.Equal(t, []string{"payments"}, topicsOf(describe("payer", 4, nil)))
	named := []kmsg.DescribeLogDirsRequestTopic{{Topic: "events", Partitions: []int32{0}}, {Topic: "payments", Partitions: []int32{0}}}
	require.Equal(t, []string{"payments"}, topicsOf(describe("payer", 4, named)))
	require.Zero(t, kerr.ErrorForCode(describe(reader, 4, named).ErrorCode))
}
