package clusternode

import (
	"errors"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

var (
	// ErrInvalidConfig is wrapped by every configuration error of Open.
	ErrInvalidConfig = errors.New("clusternode: invalid configuration")
	// ErrNotInClusterMode is returned by the operations of the embedded
	// cluster that a cluster of processes does not offer: stopping and
	// starting a broker through the API (stop the process instead), and
	// the hand-run repairs the controller does on its own.
	ErrNotInClusterMode = errors.New("clusternode: not available in cluster mode")
	// ErrNoLeader is returned while the metadata group has no leader (an
	// election is under way, or a majority of nodes is unreachable).
	ErrNoLeader = errors.New("clusternode: the cluster has no controller leader")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("clusternode: closed")
)

// refusals names the sentinels a refusal can carry across the network,
// so that a node that forwarded a proposal reports it as the node that
// applied it would: errors.Is works on either side.
var refusals = map[string]error{
	"unknown-topic":              cluster.ErrUnknownTopic,
	"topic-exists":               cluster.ErrTopicExists,
	"topic-name-conflict":        cluster.ErrTopicNameConflict,
	"invalid-partition-count":    cluster.ErrInvalidPartitionCount,
	"invalid-replication-factor": cluster.ErrInvalidReplicationFactor,
	"stale-action":               cluster.ErrStaleAction,
	"not-assigned":               cluster.ErrNotAssigned,
	"replica-is-leader":          cluster.ErrReplicaIsLeader,
	"replica-active":             cluster.ErrReplicaActive,
	"replica-inactive":           cluster.ErrReplicaInactive,
	"invalid-broker-id":          cluster.ErrInvalidBrokerID,
	"invalid-argument":           cluster.ErrInvalidArgument,
	"partition-out-of-range":     topic.ErrPartitionOutOfRange,
	"invalid-name":               topic.ErrInvalidName,
	"invalid-config":             topic.ErrInvalidConfig,
}

// refusalName is the name of the first sentinel of refusals that err
// wraps, or "".
func refusalName(err error) string {
	for name, s := range refusals {
		if errors.Is(err, s) {
			return name
		}
	}
	return ""
}

// remoteRefusal is a refusal that crossed the network: its text is the
// applying node's, and it wraps the sentinel the name stood for.
type remoteRefusal struct {
	msg      string
	sentinel error
}

func (e *remoteRefusal) Error() string { return e.msg }
func (e *remoteRefusal) Unwrap() error { return e.sentinel }
