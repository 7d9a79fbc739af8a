package kafka_test

import (
	"math"
	"net"
	"strconv"
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

// describeCluster sends DescribeCluster (key 60) at the highest version
// both ends have through cl; kadm v1.20 has no call of its own that sends
// it (its BrokerMetadata is a Metadata request).
func describeCluster(t *testing.T, cl *kgo.Client, withOps bool, endpoint int8) *kmsg.DescribeClusterResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeClusterAuthorizedOperations, req.EndpointType = withOps, endpoint
	resp, err := req.RequestWith(ctx(t), cl)
	require.NoError(t, err)
	require.Equal(t, int16(1), resp.Version, "v1 is served")
	return resp
}

// TestKafkaDescribeCluster: DescribeCluster answers the cluster id, the
// controller id and every broker's id, host and port exactly as kadm's
// BrokerMetadata (a Metadata request) reads them from the same listeners,
// with broker 1 stopped and its listener closed: still listed in both, at
// the port it reopens on, and no longer the controller — the lowest
// available broker, 2, is.
// Authorized operations are answered only when asked for.
func TestKafkaDescribeCluster(t *testing.T) {
	f := start(t, 3, 1, 1)
	require.NoError(t, f.c.StopBroker(1))
	f.srv.Reconcile()
	cl := f.client(t)
	meta, err := kadm.NewClient(cl).BrokerMetadata(ctx(t))
	require.NoError(t, err)
	require.Equal(t, int32(2), meta.Controller, "the lowest available broker")
	require.Equal(t, []int32{1, 2, 3}, meta.Brokers.NodeIDs())

	got := describeCluster(t, cl, false, 1)
	require.Zero(t, got.ErrorCode)
	require.Nil(t, got.ErrorMessage)
	require.Equal(t, int8(1), got.EndpointType)
	require.Equal(t, meta.Cluster, got.ClusterID)
	require.Equal(t, "pystream", got.ClusterID)
	require.Equal(t, meta.Controller, got.ControllerID)
	var brokers kadm.BrokerDetails
	for _, b := range got.Brokers {
		brokers = append(brokers, kadm.BrokerDetail{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
	}
	require.Equal(t, meta.Brokers, brokers)
	for _, b := range brokers[1:] {
		require.Equal(t, f.srv.Addr(int(b.NodeID)), net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), "broker %d's listener", b.NodeID)
	}
	require.Equal(t, int32(math.MinInt32), got.ClusterAuthorizedOperations, "not asked for")
}

// opsBits is the bitfield of Kafka's authorized operations ops.
func opsBits(ops ...kmsg.ACLOperation) int32 {
	var b int32
	for _, o := range ops {
		b |= 1 << o
	}
	return b
}

// TestKafkaDescribeClusterAuthorizedOperations: asked for, the cluster's
// authorized operations are what the principal's role allows of what
// the listener serves — DESCRIBE and DESCRIBE_CONFIGS for read,
// IDEMPOTENT_WRITE for write, CREATE, ALTER_CONFIGS and ALTER
// (ElectLeaders) for admin without prefixes, ALTER_CONFIGS alone for one
// limited to prefixes — and, without an auth file, all of them. Metadata
// v8-v10 answers the same bitfield.
func TestKafkaDescribeClusterAuthorizedOperations(t *testing.T) {
	all := opsBits(kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationIdempotentWrite,
		kmsg.ACLOperationCreate, kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationAlter)
	f := start(t, 1, 1, 1)
	require.Equal(t, all, describeCluster(t, f.client(t), true, 1).ClusterAuthorizedOperations)
	m := kmsg.NewPtrMetadataRequest()
	m.IncludeClusterAuthorizedOperations = true
	mresp, err := m.RequestWith(ctx(t), f.client(t, kgo.MaxVersions(kversion.V2_7_0())))
	require.NoError(t, err)
	require.Equal(t, int16(9), mresp.Version)
	require.Equal(t, all, mresp.AuthorizedOperations)

	s := startSecured(t, false, 1, 1, 1)
	for who, want := range map[string]int32{
		"reader": opsBits(kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs),
		"writer": opsBits(kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationIdempotentWrite),
		"payer":  opsBits(kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationIdempotentWrite),
		"ops":    all,
		"payops": opsBits(kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlterConfigs),
	} {
		got := describeCluster(t, s.as(t, auth.MechanismPlain, who), true, 1)
		require.Zero(t, got.ErrorCode, who)
		require.Equal(t, want, got.ClusterAuthorizedOperations, who)
		require.Len(t, got.Brokers, 1, who)
	}
}

// TestKafkaDescribeClusterEndpointTypes: v1 describes the brokers only.
// Endpoint type 2 (the controllers) is MISMATCHED_ENDPOINT_TYPE, as a
// Kafka broker's listener answers it, and a type DescribeCluster does not
// define is UNSUPPORTED_ENDPOINT_TYPE: each with a message and nothing of
// the cluster.
func TestKafkaDescribeClusterEndpointTypes(t *testing.T) {
	cl := start(t, 2, 1, 1).client(t)
	for endpoint, want := range map[int8]*kerr.Error{2: kerr.MismatchedEndpointType, 0: kerr.UnsupportedEndpointType, 3: kerr.UnsupportedEndpointType} {
		got := describeCluster(t, cl, true, endpoint)
		require.Equal(t, want.Code, got.ErrorCode, "endpoint type %d", endpoint)
		require.NotNil(t, got.ErrorMessage, "endpoint type %d", endpoint)
		require.NotEmpty(t, *got.ErrorMessage)
		require.Empty(t, got.Brokers)
		require.Empty(t, got.ClusterID)
		require.Equal(t, int32(-1), got.ControllerID)
		require.Equal(t, int32(math.MinInt32), got.ClusterAuthorizedOperations)
	}
}

// TestKafkaSaramaDescribeCluster: sarama's ClusterAdmin.DescribeCluster
// (the DescribeCluster API at version 2.8 and later) names the controller
// and every broker at the address Metadata gives.
func TestKafkaSaramaDescribeCluster(t *testing.T) {
	f := start(t, 3, 1, 1)
	require.NoError(t, f.c.StopBroker(1))
	f.srv.Reconcile()
	meta, err := kadm.NewClient(f.client(t)).BrokerMetadata(ctx(t))
	require.NoError(t, err)
	want := map[int32]string{}
	for _, b := range meta.Brokers {
		want[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}

	for _, v := range []sarama.KafkaVersion{sarama.V2_8_0_0, sarama.V3_7_0_0} {
		cfg := saramaConfig()
		cfg.Version = v
		adm, err := sarama.NewClusterAdmin([]string{f.srv.Addr(2)}, cfg)
		require.NoError(t, err)
		brokers, controller, err := adm.DescribeCluster()
		require.NoError(t, err, "version %s", v)
		require.Equal(t, meta.Controller, controller, "version %s", v)
		got := map[int32]string{}
		for _, b := range brokers {
			got[b.ID()] = b.Addr()
		}
		require.Equal(t, want, got, "version %s", v)
		require.NoError(t, adm.Close())
	}
}
