package kafka_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka/kafkatest"
)

// The compatibility matrix's Python and kcat rows
// (docs/kafka-admin.md § Clients tested) against the embedded cluster;
// the matrix itself, shared with the cluster of processes'
// (server/cmd/pystream-server), is kafkatest.RunAdminMatrix. The kgo/kadm
// and sarama rows are in each API's own test file.

// servesCreatePartitions says whether the listener advertises
// CreatePartitions (key 37) in its ApiVersions.
func (f *fixture) servesCreatePartitions(t *testing.T) bool {
	t.Helper()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx(t), f.client(t))
	require.NoError(t, err)
	for _, k := range resp.ApiKeys {
		if k.ApiKey == int16(kmsg.CreatePartitions) {
			return true
		}
	}
	return false
}

// matrixFixture is the matrix's cluster (kafkatest.Target): three
// brokers; per client a topic with a retention.ms override to describe
// and alter ("kp-conf", "cf-conf"), one to delete ("-doomed") and one to
// grow ("-grow"), and groups with committed offsets, one of them to
// delete ("-gone").
func matrixFixture(t *testing.T) *fixture {
	f := start(t, 3, 3, 3)
	for _, p := range []string{"kp", "cf"} {
		for _, name := range []string{p + "-conf", p + "-doomed", p + "-grow"} {
			require.NoError(t, f.c.CreateTopic(name, 2, 1))
		}
		_, err := f.c.AlterTopicConfig(p+"-conf", map[string]string{"retention.ms": "60000"}, nil)
		require.NoError(t, err)
	}
	f.srv.Reconcile()
	adm := f.admin(t)
	for _, g := range []string{"kp-keep", "kp-gone", "cf-keep", "cf-gone"} {
		commitSimple(t, adm, g, 0, 0, 1)
	}
	return f
}

// TestKafkaAdminMatrixPython: kafka-python's and confluent-kafka's admin
// clients, and kcat -L, against one three-broker listener
// (kafkatest.RunAdminMatrix). In the embedded cluster broker 1, the
// lowest, is the controller and lists every group; every broker describes
// the server's defaults. create_partitions skips while the listener does
// not serve CreatePartitions.
func TestKafkaAdminMatrixPython(t *testing.T) {
	f := matrixFixture(t)
	kafkatest.RunAdminMatrix(t, kafkatest.Target{
		Bootstrap:    f.srv.Addr(1),
		Brokers:      []int{1, 2, 3},
		Controller:   1,
		GroupLister:  1,
		Grow:         f.servesCreatePartitions(t),
		BrokerConfig: kafkatest.DefaultBrokerConfig,
		Overrides:    f.overrides,
		Topics: func(*testing.T) map[string]int {
			out := map[string]int{}
			for _, ti := range f.c.Topics() {
				out[ti.Name] = ti.PartitionCount
			}
			return out
		},
	})
}
