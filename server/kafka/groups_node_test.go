package kafka_test

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/server/kafka"
)

// nodeDirectory makes the embedded cluster look like a node of a cluster
// of processes: node 1 is this listener, node 2 another process, and the
// group coordinator whichever the test says.
type nodeDirectory struct {
	*backend.Local
	self        func() string
	coordinator *atomic.Int32
}

func (d nodeDirectory) KafkaAddrs() map[int]string {
	return map[int]string{1: d.self(), 2: "127.0.0.1:9"}
}

// Controller names the coordinator's node as the controller too, as the
// metadata group's leader is both.
func (d nodeDirectory) Controller() int { return int(d.coordinator.Load()) }

func (d nodeDirectory) GroupCoordinator() (int, bool) {
	id := int(d.coordinator.Load())
	return id, id == 1
}

// TestKafkaGroupCoordinatorNodeMode: in a cluster of processes group
// state lives on one node. Every node's FindCoordinator names it; a
// group request reaching another node is NOT_COORDINATOR (the client
// finds the coordinator again), and COORDINATOR_NOT_AVAILABLE while no
// node is known to be it.
func TestKafkaGroupCoordinatorNodeMode(t *testing.T) {
	f := start(t, 1, 1, 1)
	var coordinator atomic.Int32
	srv, node := f.nodeListener(t, &coordinator)

	find := func() *kmsg.FindCoordinatorResponseCoordinator {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKeys = 4, []string{"g"}
		return &roundTrip(t, node, req, 4).(*kmsg.FindCoordinatorResponse).Coordinators[0]
	}
	require.Equal(t, kerr.CoordinatorNotAvailable.Code, find().ErrorCode, "no coordinator known")
	require.Equal(t, kerr.CoordinatorNotAvailable.Code, rawJoin(t, node, 5, "g", "", nil, 1000).ErrorCode)

	coordinator.Store(2)
	got := find()
	require.Zero(t, got.ErrorCode)
	require.Equal(t, int32(2), got.NodeID)
	require.Equal(t, "127.0.0.1", got.Host)
	require.Equal(t, int32(9), got.Port)
	require.Equal(t, kerr.NotCoordinator.Code, rawJoin(t, node, 5, "g", "", nil, 1000).ErrorCode)
	require.Equal(t, kerr.NotCoordinator.Code, rawHeartbeat(t, node, "g", "m", nil, 1))
	require.Equal(t, kerr.NotCoordinator.Code, rawCommit(t, node, "g", "", nil, -1), "commits go to the coordinator too")

	coordinator.Store(1)
	got = find()
	require.Equal(t, int32(1), got.NodeID)
	require.Equal(t, srv.Addr(1), net.JoinHostPort(got.Host, strconv.Itoa(int(got.Port))))
	memberID, generation := rawMember(t, node, "g", nil)
	require.Zero(t, rawHeartbeat(t, node, "g", memberID, nil, generation))
}

// nodeListener serves f's cluster as node 1 of a cluster of processes
// (nodeDirectory) whose group and transaction coordinator is the node
// coordinator names, and dials it.
func (f *fixture) nodeListener(t *testing.T, coordinator *atomic.Int32) (*kafka.Server, net.Conn) {
	t.Helper()
	var srv *kafka.Server
	dir := nodeDirectory{Local: embedded(f.c), self: func() string { return srv.Addr(1) }, coordinator: coordinator}
	groups := group.NewClassicCoordinator(group.NewRegistry(), group.ClassicConfig{MinSessionTimeout: 50 * time.Millisecond})
	t.Cleanup(groups.Close)
	srv, err := kafka.New(dir, kafka.Config{Host: "127.0.0.1", NodeID: 1, Groups: groups})
	require.NoError(t, err)
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(c) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	srv.Reconcile()
	return srv, f.dialAddr(t, srv.Addr(1))
}

// dialAddr opens a raw connection to addr.
func (f *fixture) dialAddr(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	require.NoError(t, nc.SetDeadline(time.Now().Add(5*time.Second)))
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}
