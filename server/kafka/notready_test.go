package kafka_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka"
)

// replaying is a backend whose metadata is not current while replay is
// set: a node of cluster mode that has just started.
type replaying struct {
	nodeDirectory
	replay *atomic.Bool
}

func (r replaying) MetadataCurrent() bool { return !r.replay.Load() }

// TestKafkaNotReadyWhileReplaying pins the rule
// (docs/phase-7-processes.md § Nothing answered before it is known):
// while the metadata is not known to be current, every request that
// depends on it gets the retriable code a Kafka broker gives while it
// loads — LEADER_NOT_AVAILABLE for a leader's requests,
// COORDINATOR_LOAD_IN_PROGRESS for a coordinator's — never an unknown
// topic or an empty answer; ApiVersions is answered; once current, the
// same requests are served. Metadata and DescribeCluster name the
// controller the directory names (the metadata group's leader), not the
// first broker up.
func TestKafkaNotReadyWhileReplaying(t *testing.T) {
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
	node := f.dialAddr(t, srv.Addr(1))

	metadata := func() *kmsg.MetadataResponse {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		topic := kmsg.NewMetadataRequestTopic()
		topic.Topic = kmsg.StringPtr("events")
		req.Topics = []kmsg.MetadataRequestTopic{topic}
		return roundTrip(t, node, req, 12).(*kmsg.MetadataResponse)
	}
	offsetFetch := func() int16 {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group = 5, "g"
		return roundTrip(t, node, req, 5).(*kmsg.OffsetFetchResponse).ErrorCode
	}
	describe := func() *kmsg.DescribeClusterResponse {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = 1
		return roundTrip(t, node, req, 1).(*kmsg.DescribeClusterResponse)
	}
	versions := kmsg.NewPtrApiVersionsRequest()
	versions.Version = 3
	require.Zero(t, roundTrip(t, node, versions, 3).(*kmsg.ApiVersionsResponse).ErrorCode, "ApiVersions needs no metadata")
	require.Equal(t, kerr.LeaderNotAvailable.Code, metadata().Topics[0].ErrorCode)
	require.Equal(t, kerr.CoordinatorLoadInProgress.Code, offsetFetch())
	require.Equal(t, kerr.LeaderNotAvailable.Code, describe().ErrorCode)

	replay.Store(false)
	m := metadata()
	require.Zero(t, m.Topics[0].ErrorCode)
	require.Equal(t, int32(1), m.ControllerID)
	coordinator.Store(2)
	require.Equal(t, int32(2), metadata().ControllerID, "the controller is the metadata group's leader, wherever asked")
	require.Equal(t, int32(2), describe().ControllerID, "DescribeCluster's as Metadata's")
	coordinator.Store(0)
	require.Equal(t, int32(-1), metadata().ControllerID, "none known")
	require.Equal(t, int32(-1), describe().ControllerID, "none known")
	require.Zero(t, offsetFetch())
}
