package server

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// apiError is an error answer: the HTTP status and the body. Handlers build
// one for what they find wrong in a request (badRequest, notFound, ...) and
// get one for a library error from classify.
type apiError struct {
	status int
	body   ErrorBody
}

func (e *apiError) Error() string { return e.body.Message }

func newAPIError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, body: ErrorBody{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func badRequest(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, CodeInvalidArgument, format, args...)
}

func notFound(format string, args ...any) *apiError {
	return newAPIError(http.StatusNotFound, CodeNotFound, format, args...)
}

// writeAPIError sends e.
func writeAPIError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, ErrorResponse{Error: e.body})
}

// classify maps an error of the libraries to the contract's status, code
// and extras (docs/phase-6-network-api.md, "Errors"). It is a pure function
// of the error: table-tested without a cluster. Anything it does not know
// is a 500 with the error's message, which never happens for bad input,
// because handlers validate every value before calling a library.
func classify(err error) *apiError {
	var (
		ae    *apiError
		regr  *client.OffsetRegressionError
		exist *cluster.TopicExistsError
		lu    *cluster.LeaderUnavailableError
		re    *cluster.ReplicationError
		ne    *cluster.NoEligibleReplicaError
		div   *cluster.ReplicaDivergenceError
		batch *topic.BatchError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &batch):
		return classifyBatch(batch)
	case errors.As(err, &lu):
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s", msg)
		e.body.BrokerIDs = []int{lu.BrokerID}
		return e
	case errors.As(err, &re):
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s", msg)
		e.body.BrokerIDs = slices.Clone(re.BrokerIDs)
		return e
	case errors.As(err, &ne):
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s", msg)
		e.body.BrokerIDs = []int{ne.LeaderBrokerID}
		return e
	case errors.As(err, &div):
		e := newAPIError(http.StatusConflict, CodeConflict, "%s", msg)
		e.body.BrokerIDs = []int{div.BrokerID}
		return e
	case errors.As(err, &regr):
		e := newAPIError(http.StatusConflict, CodeConflict, "%s", msg)
		committed, requested := regr.Committed, regr.Requested
		e.body.Committed, e.body.Requested = &committed, &requested
		return e
	case errors.As(err, &exist) && !exist.SameSettings,
		errors.Is(err, cluster.ErrLeaderStillAvailable),
		errors.Is(err, cluster.ErrReplicaActive),
		errors.Is(err, cluster.ErrReplicaIsLeader),
		errors.Is(err, cluster.ErrBrokerRegistered):
		return newAPIError(http.StatusConflict, CodeConflict, "%s", msg)
	case errors.Is(err, topic.ErrInvalidName),
		errors.Is(err, cluster.ErrInvalidPartitionCount),
		errors.Is(err, cluster.ErrInvalidReplicationFactor),
		errors.Is(err, cluster.ErrInvalidBrokerID),
		errors.Is(err, cluster.ErrInvalidArgument),
		errors.Is(err, log.ErrInvalidArgument):
		return newAPIError(http.StatusBadRequest, CodeInvalidArgument, "%s", msg)
	case errors.Is(err, cluster.ErrUnknownTopic),
		errors.Is(err, topic.ErrPartitionOutOfRange),
		errors.Is(err, cluster.ErrUnknownBroker),
		errors.Is(err, cluster.ErrNotAssigned):
		return newAPIError(http.StatusNotFound, CodeNotFound, "%s", msg)
	case errors.Is(err, log.ErrPayloadTooLarge):
		return newAPIError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "%s", msg)
	case errors.Is(err, cluster.ErrBrokerUnavailable),
		errors.Is(err, cluster.ErrClosed):
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s", msg)
	}
	return newAPIError(http.StatusInternalServerError, CodeInternal, "%s", msg)
}

// classifyBatch answers a produce batch that failed on some partitions with
// the error of the first failed partition (its status and code), the union
// of every failed partition's broker ids, and a message naming them all.
// The per-record outcome is added by the produce handler.
func classifyBatch(b *topic.BatchError) *apiError {
	var first *apiError
	var ids []int
	for _, p := range slices.Sorted(maps.Keys(b.Partitions)) {
		e := classify(b.Partitions[p])
		if first == nil {
			first = e
		}
		ids = append(ids, e.body.BrokerIDs...)
	}
	if first == nil {
		return newAPIError(http.StatusInternalServerError, CodeInternal, "%s", b.Error())
	}
	slices.Sort(ids)
	return &apiError{status: first.status, body: ErrorBody{Code: first.body.Code, Message: b.Error(), BrokerIDs: slices.Compact(ids)}}
}
