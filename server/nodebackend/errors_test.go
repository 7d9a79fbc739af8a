package nodebackend

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/raftmeta"
	"github.com/pystream/pystream/server/replication"
)

// TestNodeBackendMarksErrors: each of the node's own errors is marked
// with the backend sentinel that says what it means, keeping its text
// and its chain, so that both protocols answer it without importing the
// node's packages; the cluster's errors pass as they are.
func TestNodeBackendMarksErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		kind error
	}{
		{"a broker is a process", fmt.Errorf("stop broker 1: stop its process instead: %w", cluster.ErrBrokerIsProcess), backend.ErrNotInThisMode},
		{"no leader", fmt.Errorf("%w: %w", clusternode.ErrNoLeader, &raftmeta.NotLeaderError{}), backend.ErrNoController},
		{"not the leader", &raftmeta.NotLeaderError{LeaderID: 2, LeaderAddr: "127.0.0.1:7002"}, backend.ErrLeaderMoved},
		{"leadership lost", fmt.Errorf("raftmeta: add voter 4: %w", raftmeta.ErrLeadershipLost), backend.ErrOutcomeUnknown},
		{"raft closed", fmt.Errorf("raftmeta: servers: %w", raftmeta.ErrClosed), backend.ErrNodeClosed},
		{"node closed", clusternode.ErrClosed, backend.ErrNodeClosed},
	} {
		got := mark(c.err)
		require.ErrorIs(t, got, c.kind, c.name)
		require.ErrorIs(t, got, c.err, c.name)
		require.Equal(t, c.err.Error(), got.Error(), c.name)
	}

	bad := replication.Errorf(replication.CodeBadRequest, "adding node %d needs its internal address", 4)
	var peer *backend.PeerError
	require.ErrorAs(t, mark(bad), &peer)
	require.Equal(t, backend.ErrPeerBadRequest, peer.Kind)
	require.Equal(t, "adding node 4 needs its internal address", peer.Message)
	for _, code := range []string{replication.CodeUnavailable, replication.CodeNotLeader} {
		require.ErrorAs(t, mark(replication.Errorf(code, "raftmeta: add voter 4")), &peer)
		require.Equal(t, backend.ErrPeerUnavailable, peer.Kind, code)
	}
	diverged := replication.Errorf(replication.CodeDiverged, "records differ")
	require.Equal(t, diverged, mark(diverged), "a refusal the protocols do not map passes as it is")

	unknown := fmt.Errorf("topic %q: %w", "nope", cluster.ErrUnknownTopic)
	require.Equal(t, unknown, mark(unknown))
	require.NoError(t, mark(nil))
}

// TestNodeBackendBrokerIsProcess: cluster mode's refusal to stop or start
// a broker through the API is errors.ErrUnsupported too (backend's "not
// in this mode"), keeping its cause.
func TestNodeBackendBrokerIsProcess(t *testing.T) {
	err := mark(fmt.Errorf("stop broker %d: %w", 2, cluster.ErrBrokerIsProcess))
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorIs(t, err, backend.ErrNotInThisMode)
	require.ErrorIs(t, err, cluster.ErrBrokerIsProcess)
}
