package kafka_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka/kafkatest"
)

// kcat runs kcat against broker 1's listener with args and stdin, bounded
// to ten seconds, and returns its standard output. The test is skipped
// when kcat is not installed.
func (f *fixture) kcat(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	return kafkatest.Kcat(t, f.srv.Addr(1), stdin, args...)
}

// TestKafkaKcatProduceConsumeList: kcat (librdkafka, a third
// implementation) produces keyed records with headers (-P -K: -H),
// consumes them back to the end of the partition (-C -e) with key,
// headers and value, and lists the brokers and topics (-L).
func TestKafkaKcatProduceConsumeList(t *testing.T) {
	f := start(t, 2, 2, 2)
	f.kcat(t, "k1:first\nk2:second\n", "-P", "-t", "events", "-p", "1", "-K:", "-H", "trace=abc", "-H", "n=1")

	out := f.kcat(t, "", "-C", "-e", "-q", "-t", "events", "-p", "1", "-o", "beginning", "-f", "%o %k %h %s\n")
	require.Equal(t, "0 k1 trace=abc,n=1 first\n1 k2 trace=abc,n=1 second\n", out)

	list := f.kcat(t, "", "-L")
	require.Contains(t, list, "2 brokers:")
	require.Contains(t, list, `topic "events" with 2 partitions:`)
	require.Regexp(t, `partition 1, leader \d, replicas: \d,\d, isrs: \d,\d`, list)
}

// TestKafkaFetchEmptyIsNotNull: a fetch that finds no records answers an
// empty record set, not a null one (size -1), which librdkafka, and so
// kcat, refuses as a protocol error.
func TestKafkaFetchEmptyIsNotNull(t *testing.T) {
	f := start(t, 1, 1, 1)
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 11, 0, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "events"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := roundTrip(t, f.dial(t, 1), req, 11).(*kmsg.FetchResponse)
	got := resp.Topics[0].Partitions[0]
	require.Zero(t, got.ErrorCode)
	require.NotNil(t, got.RecordBatches, "an empty record set, not a null one")
	require.Empty(t, got.RecordBatches)
}

// TestKafkaGroupKcat: kcat's balanced consumer (-G, librdkafka's
// high-level consumer: a third implementation of the join/sync
// protocol) joins a group, is assigned both partitions, reads every
// record from the earliest offset, commits on its way out and leaves;
// a second run of the same group reads only what came after.
func TestKafkaGroupKcat(t *testing.T) {
	f := startGroups(t, 1, 2, 1)
	f.produceEach(t, 2, 2)
	group := []string{"-G", "kcat-billing", "-q", "-f", "%p %o %s\n", "-X", "auto.offset.reset=earliest",
		"-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=100"}
	out := f.kcat(t, "", append(group, "-c", "4", "events")...)
	require.ElementsMatch(t, []string{"0 0 p0-0", "0 1 p0-1", "1 0 p1-0", "1 1 p1-1"}, strings.Split(strings.TrimSpace(out), "\n"))
	store, err := f.c.OffsetStore()
	require.NoError(t, err)
	for p := range 2 {
		off, ok, err := store.Load("kcat-billing", "events", p)
		require.NoError(t, err)
		require.True(t, ok, "partition %d committed", p)
		require.Equal(t, uint64(2), off)
	}
	_, ok := f.groups.Describe("kcat-billing")
	require.False(t, ok, "kcat left the group")

	f.produceEach(t, 1, 1)
	out = f.kcat(t, "", append(group, "-c", "1", "events")...)
	require.Equal(t, "0 2 p0-0\n", out)
}
