package nodebackend

import (
	"errors"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/raftmeta"
	"github.com/pystream/pystream/server/replication"
)

// marks are the node's sentinels and what each means in backend's terms,
// in the order they are looked for.
var marks = []struct{ err, kind error }{
	{clusternode.ErrNoLeader, backend.ErrNoController},
	{cluster.ErrNoController, backend.ErrNoController},
	{cluster.ErrBrokerIsProcess, backend.ErrNotInThisMode},
	{raftmeta.ErrNotLeader, backend.ErrLeaderMoved},
	{raftmeta.ErrLeadershipLost, backend.ErrOutcomeUnknown},
	{clusternode.ErrClosed, backend.ErrNodeClosed},
	{raftmeta.ErrClosed, backend.ErrNodeClosed},
}

// mark returns err marked with the backend sentinel of the first of the
// node's errors it wraps (marks), or as a *backend.PeerError when a peer
// refused a forwarded request as malformed or unservable now; any other
// error, and nil, as it is. The text is always err's.
func mark(err error) error {
	if err == nil {
		return nil
	}
	for _, m := range marks {
		if errors.Is(err, m.err) {
			return backend.Mark(err, m.kind)
		}
	}
	var remote *replication.Error
	if errors.As(err, &remote) {
		switch remote.Code {
		case replication.CodeBadRequest:
			return &backend.PeerError{Message: remote.Message, Kind: backend.ErrPeerBadRequest, Err: err}
		case replication.CodeNotLeader, replication.CodeUnavailable:
			return &backend.PeerError{Message: remote.Message, Kind: backend.ErrPeerUnavailable, Err: err}
		}
	}
	return err
}

// marked is mark for a call that returns a value too.
func marked[T any](v T, err error) (T, error) { return v, mark(err) }
