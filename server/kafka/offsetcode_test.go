package kafka

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
)

// TestOffsetCodeCoordinatorChange: a commit or fetch of offsets that
// meets the cluster changing its metadata leader (a coordinator change
// in a cluster of processes), a closing node or a peer that cannot serve
// now is answered COORDINATOR_NOT_AVAILABLE, which a Kafka client retries
// after finding the coordinator again, never UNKNOWN_SERVER_ERROR.
func TestOffsetCodeCoordinatorChange(t *testing.T) {
	cause := errors.New("raft: leadership lost while committing command")
	for _, kind := range []error{backend.ErrLeaderMoved, backend.ErrOutcomeUnknown, backend.ErrNoController,
		backend.ErrNodeClosed, backend.ErrPeerUnavailable} {
		err := backend.Mark(cause, kind)
		require.Equal(t, kerr.CoordinatorNotAvailable.Code, offsetCode(err), "%v", kind)
		require.True(t, kerr.IsRetriable(kerr.ErrorForCode(offsetCode(err))), "%v", kind)
	}
	require.Equal(t, kerr.CoordinatorNotAvailable.Code, offsetCode(cluster.ErrClosed))
	require.Equal(t, kerr.UnknownServerError.Code, offsetCode(cause), "an error of no known kind")
}
