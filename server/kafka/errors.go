package kafka

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/topic"
)

// Sentinel errors of the request reader. Every error it returns wraps
// one of these or io.EOF (a connection closed between two requests).
var (
	// ErrFrameTooLarge is a size prefix above the configured limit: the
	// connection is closed without reading the frame.
	ErrFrameTooLarge = errors.New("kafka: request frame above PYSTREAM_MAX_REQUEST_BYTES")
	// ErrMalformedRequest is a frame whose header or body does not decode.
	ErrMalformedRequest = errors.New("kafka: malformed request")
	// ErrUnknownAPI is a request whose API key the listener does not serve.
	ErrUnknownAPI = errors.New("kafka: unknown API key")
	// ErrUnsupportedVersion is a version outside the ones this listener
	// or its codec know, so that no answer can be encoded.
	ErrUnsupportedVersion = errors.New("kafka: unsupported version")
	// ErrUnauthenticated is a request other than ApiVersions and the
	// SASL exchange on a connection that has not authenticated, with an
	// auth file: the connection is closed, as a Kafka broker closes it.
	ErrUnauthenticated = errors.New("kafka: request before SASL authentication")
	// ErrSASL is a SASL exchange that ended the connection: a failed
	// authentication (whose answer was sent), or a bare SASL message
	// (after a v0 handshake) that failed.
	ErrSASL = errors.New("kafka: SASL authentication failed")
)

// FrameError is a frame refused by the request reader: Size is its size
// prefix and Max the limit it passed (for ErrFrameTooLarge).
type FrameError struct {
	Size, Max int64
	Err       error
}

func (e *FrameError) Error() string {
	if errors.Is(e.Err, ErrFrameTooLarge) {
		return fmt.Sprintf("%v: %d bytes, at most %d", e.Err, e.Size, e.Max)
	}
	return fmt.Sprintf("%v (frame of %d bytes)", e.Err, e.Size)
}

func (e *FrameError) Unwrap() error { return e.Err }

// errorCode maps an error of the cluster to the Kafka error code a client
// acts on: a code that makes it refresh metadata and retry where retrying
// is right, a final one otherwise.
func errorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, cluster.ErrUnknownTopic), errors.Is(err, topic.ErrPartitionOutOfRange):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, log.ErrPayloadTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, cluster.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, cluster.ErrDuplicateSequence):
		return kerr.DuplicateSequenceNumber.Code
	case errors.Is(err, cluster.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, cluster.ErrUnknownProducer):
		return kerr.UnknownProducerID.Code
	case errors.Is(err, cluster.ErrInvalidProducerBatch):
		return kerr.InvalidRecord.Code
	case errors.Is(err, cluster.ErrNotEnoughReplicas):
		// Fewer active replicas than the topic's min.insync.replicas:
		// refused before anything was appended, and retriable, as
		// Kafka's.
		return kerr.NotEnoughReplicas.Code
	case errors.As(err, new(*cluster.DuplicateNotCommittedError)):
		// Written before, not yet on every active replica: the client
		// sends it again, and is answered with its offsets once it is.
		return kerr.NotEnoughReplicas.Code
	case errors.Is(err, cluster.ErrReplicationFailed):
		// The leader kept the records but a follower did not store
		// them: not acknowledged, and a retry may duplicate them —
		// exactly Kafka's NOT_ENOUGH_REPLICAS_AFTER_APPEND.
		return kerr.NotEnoughReplicasAfterAppend.Code
	case errors.Is(err, cluster.ErrLeaderUnavailable), errors.Is(err, cluster.ErrBrokerUnavailable),
		errors.Is(err, cluster.ErrNoEligibleReplica):
		return kerr.LeaderNotAvailable.Code
	case errors.Is(err, cluster.ErrClosed):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, cluster.ErrProducerFenced):
		return kerr.ProducerFenced.Code
	case errors.Is(err, cluster.ErrConcurrentTransactions):
		return kerr.ConcurrentTransactions.Code
	case errors.Is(err, cluster.ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code
	case errors.Is(err, cluster.ErrProducerIDMapping):
		return kerr.InvalidProducerIDMapping.Code
	case errors.Is(err, cluster.ErrInvalidTxnTimeout):
		return kerr.InvalidTransactionTimeout.Code
	}
	return kerr.UnknownServerError.Code
}

// fencedSince is the version of each transaction request from which a
// client understands PRODUCER_FENCED (KIP-588, Kafka 2.7); an older
// version is told INVALID_PRODUCER_EPOCH instead, as a Kafka broker tells
// it. TxnOffsetCommit never gained the code: Kafka answers it
// INVALID_PRODUCER_EPOCH at every version.
var fencedSince = map[kmsg.Key]int16{
	kmsg.InitProducerID:     4,
	kmsg.AddPartitionsToTxn: 2,
	kmsg.AddOffsetsToTxn:    2,
	kmsg.EndTxn:             2,
}

// txnCode is errorCode for a transaction request of key at version: a
// fenced producer is PRODUCER_FENCED where the version has the code
// (fencedSince) and INVALID_PRODUCER_EPOCH below it; a coordinator that
// cannot answer now — its node closing, the metadata group without a
// leader or its leadership moving, a change whose outcome is unknown — is
// COORDINATOR_NOT_AVAILABLE, which sends the client to FindCoordinator
// and back, where every one of these requests may be sent again.
func txnCode(err error, key kmsg.Key, version int16) int16 {
	switch {
	case errors.Is(err, cluster.ErrProducerFenced):
		if since, ok := fencedSince[key]; ok && version >= since {
			return kerr.ProducerFenced.Code
		}
		return kerr.InvalidProducerEpoch.Code
	case unavailableNow(err):
		return kerr.CoordinatorNotAvailable.Code
	case errors.Is(err, cluster.ErrNotReady):
		return kerr.CoordinatorLoadInProgress.Code
	case errors.Is(err, cluster.ErrInvalidArgument):
		// An empty or overlong transactional id, a transaction past the
		// coordinator's bounds (cluster.MaxTxnPartitions, ...).
		return kerr.InvalidRequest.Code
	}
	if code := errorCode(err); code != kerr.UnknownServerError.Code {
		return code
	}
	// TxnOffsetCommit's offsets obey OffsetCommit's rules.
	return offsetCode(err)
}

// errorf wraps sentinel with a formatted detail.
func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

// unavailableNow reports whether err says the cluster cannot take a
// change now but may in a moment: this node closing, the metadata group
// without a leader or its leadership moving (a coordinator change in a
// cluster of processes), a peer that cannot serve now, or a change whose
// outcome is unknown. Each API answers it with its own retriable code.
func unavailableNow(err error) bool {
	for _, e := range []error{cluster.ErrClosed, backend.ErrNodeClosed, backend.ErrNoController, backend.ErrLeaderMoved,
		backend.ErrOutcomeUnknown, backend.ErrPeerUnavailable} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
