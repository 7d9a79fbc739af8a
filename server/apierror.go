package server

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

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
		end   *client.OffsetBeyondEndError
		exist *cluster.TopicExistsError
		lu    *cluster.LeaderUnavailableError
		re    *cluster.ReplicationError
		ne    *cluster.NoEligibleReplicaError
		div   *cluster.ReplicaDivergenceError
		batch *topic.BatchError
	)
	err = withoutJournalFailure(err)
	msg := err.Error()
	switch {
	case errors.As(err, &ae):
		return ae
	case tookEffect(err):
		// The cause names the journal's file: it goes to the server log
		// (opError), not to the client.
		return newAPIError(http.StatusInternalServerError, CodeInternal,
			"the operation took effect, but its journal entry was not written; the server log has the cause")
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
	case errors.As(err, &end):
		e := newAPIError(http.StatusConflict, CodeConflict, "%s", msg)
		hw, requested := end.End, end.Requested
		e.body.HighWatermark, e.body.Requested = &hw, &requested
		return e
	case errors.As(err, &exist) && !exist.SameSettings,
		errors.Is(err, cluster.ErrLeaderStillAvailable),
		errors.Is(err, cluster.ErrReplicaActive),
		errors.Is(err, cluster.ErrReplicaIsLeader),
		errors.Is(err, cluster.ErrReplicaInactive),
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

// tookEffect reports whether err is the error of an operation that took
// effect and only failed to write its journal entry: cluster.ErrJournalFailed
// first in its chain. An operation that failed and could not journal its
// failure either joins its own error first (errors.Join), and is answered
// for that error.
func tookEffect(err error) bool {
	for err != nil {
		if err == cluster.ErrJournalFailed {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			errs := u.Unwrap()
			if len(errs) == 0 {
				return false
			}
			err = errs[0]
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// withoutJournalFailure returns the operation's own error of a failed
// operation whose failure could not be journaled either (errors.Join of
// the two): the client is answered for what failed, and the journal's
// trouble, which the server logs, does not read as "took effect". Any
// other error is returned as it is.
func withoutJournalFailure(err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || tookEffect(err) {
		return err
	}
	var rest []error
	for _, e := range j.Unwrap() {
		if !errors.Is(e, cluster.ErrJournalFailed) {
			rest = append(rest, e)
		}
	}
	if len(rest) == 0 || len(rest) == len(j.Unwrap()) {
		return err
	}
	return errors.Join(rest...)
}

// opError is the answer for a failed call of the cluster: classify's
// status and code, the stopped brokers named on a 503, the full error of
// a 500 in the server log, and no absolute path in the message — paths
// under the data directory are given relative to it.
func (s *Server) opError(op string, err error) *apiError {
	e := s.withUnavailable(classify(err))
	if e.status == http.StatusInternalServerError {
		s.logger.Error(op+" failed", "error", err)
	}
	e.body.Message = s.relativePaths(e.body.Message)
	return e
}

// relativePaths rewrites the paths under the data directory in msg
// relative to it, as an operator sees them from there.
func (s *Server) relativePaths(msg string) string {
	return strings.ReplaceAll(msg, s.cluster.Root()+string(filepath.Separator), "")
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
