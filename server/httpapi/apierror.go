package httpapi

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/topic"
)

// apiError is an error answer: the HTTP status and the body. Handlers build
// one for what they find wrong in a request (badRequest, notFound, ...) and
// get one for a library error from classify, which keeps the library's
// error as the cause: the body says what failed in PyStream's terms, the
// cause goes to the server log with the request id (observe).
type apiError struct {
	status int
	body   ErrorBody
	// cause is the library error the answer stands for, whole; nil for
	// an answer a handler built from the request alone.
	cause error
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

// classify maps an error of the libraries to the contract's status, code
// and extras (docs/phase-6-network-api.md, "Errors"), and writes its
// message in PyStream's terms from the typed errors' fields: which topic,
// partition, broker or offset, and what happened. It never copies an
// error chain or a path into the message; the whole error is the answer's
// cause, which the server logs with the request id. It is a pure function
// of the error: table-tested without a cluster. An error it does not know
// is a 500 that names the file involved when there is one, and otherwise
// sends the reader to the server log; it never happens for bad input,
// because handlers validate every value before calling a library.
func classify(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	e := classifyCause(withoutJournalFailure(err))
	e.cause = err
	return e
}

func classifyCause(err error) *apiError {
	var (
		regr     *client.OffsetRegressionError
		end      *client.OffsetBeyondEndError
		oor      *client.OffsetOutOfRangeError
		offCorr  *client.OffsetCorruptionError
		exist    *cluster.TopicExistsError
		still    *cluster.LeaderStillAvailableError
		lu       *cluster.LeaderUnavailableError
		re       *cluster.ReplicationError
		few      *cluster.NotEnoughReplicasError
		ne       *cluster.NoEligibleReplicaError
		div      *cluster.ReplicaDivergenceError
		clMeta   *cluster.MetadataError
		topicMet *topic.MetadataError
		batch    *topic.BatchError
		peer     *backend.PeerError
		pending  *cluster.DeletionPendingError
		member   *group.MemberError
		mismatch *group.ProtocolMismatchError
	)
	switch {
	case errors.As(err, &pending):
		e := newAPIError(http.StatusConflict, CodeConflict,
			"topic %q is still being deleted: broker(s) %s have not yet removed its files; it can be created again once they have (each does as soon as it runs)",
			pending.Topic, joinIDs(pending.Brokers))
		e.body.BrokerIDs = slices.Clone(pending.Brokers)
		return e
	case errors.Is(err, cluster.ErrDeleteUnfinished):
		// The cause names the files that are left: the server log has
		// them.
		return newAPIError(http.StatusInternalServerError, CodeInternal,
			"the topic is deleted, but its files are not all removed yet; it cannot be created again until they are (the server retries at the next create or start); the server log names them")
	case tookEffect(err):
		// The cause names the journal's file: it goes to the server log,
		// not to the client.
		return newAPIError(http.StatusInternalServerError, CodeInternal,
			"the operation took effect, but its journal entry was not written; the server log has the cause")
	case errors.As(err, &batch):
		return classifyBatch(batch)
	}
	// Before the unavailable brokers: a batch sent again too early is
	// retriable as one, with a message of its own.
	if e, ok := producerRefusal(err); ok {
		return e
	}
	switch {
	case durable.NoSpace(err):
		return noSpace(err)
	case errors.As(err, &few):
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"%s/%d: %d active replica(s), fewer than the topic's min.insync.replicas (%d): nothing was written; try again once enough replicas are back in sync",
			few.Topic, few.Partition, few.Active, few.MinInsync)
	case errors.As(err, &lu):
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s/%d: leader broker %d is unavailable", lu.Topic, lu.Partition, lu.BrokerID)
		if c := causeOf(lu.Err); c != "" {
			e.body.Message += " (" + c + ")"
		}
		e.body.BrokerIDs = []int{lu.BrokerID}
		return e
	case errors.As(err, &re):
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s", replicationMessage(re))
		e.body.BrokerIDs = slices.Clone(re.BrokerIDs)
		return e
	case errors.As(err, &ne):
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s/%d: no follower can replace leader broker %d", ne.Topic, ne.Partition, ne.LeaderBrokerID)
		if r := tidy(ne.Reason); r != "" {
			e.body.Message += ": " + r
		}
		e.body.BrokerIDs = []int{ne.LeaderBrokerID}
		return e
	case errors.As(err, &div):
		e := newAPIError(http.StatusConflict, CodeConflict, "%s/%d: broker %d's replica diverges at offset %d", div.Topic, div.Partition, div.BrokerID, div.Offset)
		if r := tidy(div.Reason); r != "" {
			e.body.Message += ": " + r
		}
		e.body.BrokerIDs = []int{div.BrokerID}
		return e
	case errors.As(err, &member):
		return memberError(member)
	case errors.As(err, &mismatch):
		return newAPIError(http.StatusConflict, CodeConflict, "group %q has %s members; %s members cannot join it until they have left",
			mismatch.Group, protocolWords(mismatch.Has), protocolWords(mismatch.Want))
	case errors.Is(err, group.ErrTooManyGroups), errors.Is(err, group.ErrDeleting):
		return newAPIError(http.StatusConflict, CodeConflict, "%s", tidy(err.Error()))
	case errors.Is(err, group.ErrNotSaved):
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s; try again", tidy(err.Error()))
	case errors.Is(err, group.ErrInvalidHeartbeat):
		return newAPIError(http.StatusBadRequest, CodeInvalidArgument, "%s", tidy(err.Error()))
	case errors.As(err, &oor):
		return offsetOutOfRange(oor)
	case errors.As(err, &regr):
		e := newAPIError(http.StatusConflict, CodeConflict,
			"consumer %s: offset %d of %s/%d is below the committed offset %d; a commit never moves backwards (a reset does)",
			regr.ConsumerID, regr.Requested, regr.Topic, regr.Partition, regr.Committed)
		committed, requested := regr.Committed, regr.Requested
		e.body.Committed, e.body.Requested = &committed, &requested
		return e
	case errors.As(err, &end):
		e := newAPIError(http.StatusConflict, CodeConflict,
			"consumer %s: offset %d of %s/%d is past the high watermark %d; a committed offset can be at most the high watermark",
			end.ConsumerID, end.Requested, end.Topic, end.Partition, end.End)
		hw, requested := end.End, end.Requested
		e.body.HighWatermark, e.body.Requested = &hw, &requested
		return e
	case errors.As(err, &still):
		return newAPIError(http.StatusConflict, CodeConflict,
			"%s/%d: leader broker %d is still available; failover replaces a failed leader (move-leader moves a live one)",
			still.Topic, still.Partition, still.BrokerID)
	case errors.As(err, &exist) && !exist.SameSettings:
		return newAPIError(http.StatusConflict, CodeConflict,
			"topic %q exists with %d partition(s) and replication factor %d, not the settings requested",
			exist.Topic, exist.PartitionCount, exist.ReplicationFactor)
	case errors.Is(err, cluster.ErrTopicNameConflict), errors.Is(err, cluster.ErrOpenLogsLimit):
		// Both refuse a creation that is valid in itself but conflicts
		// with what the server holds: another topic's name, or the
		// descriptors of the topics there are (freed by deleting one).
		msg := tidy(err.Error())
		if errors.Is(err, cluster.ErrOpenLogsLimit) {
			msg += " (PYSTREAM_MAX_OPEN_LOGS)"
		}
		return newAPIError(http.StatusConflict, CodeConflict, "%s", msg)
	case errors.Is(err, cluster.ErrReplicaActive),
		errors.Is(err, cluster.ErrReplicaIsLeader),
		errors.Is(err, cluster.ErrReplicaInactive),
		errors.Is(err, cluster.ErrBrokerRegistered):
		return newAPIError(http.StatusConflict, CodeConflict, "%s", tidy(err.Error()))
	case errors.Is(err, topic.ErrInvalidName),
		errors.Is(err, topic.ErrInvalidConfig),
		errors.Is(err, cluster.ErrInvalidPartitionCount),
		errors.Is(err, cluster.ErrInvalidReplicationFactor),
		errors.Is(err, cluster.ErrInvalidBrokerID),
		errors.Is(err, cluster.ErrInvalidArgument),
		errors.Is(err, log.ErrInvalidArgument):
		return newAPIError(http.StatusBadRequest, CodeInvalidArgument, "%s", tidy(err.Error()))
	case errors.Is(err, cluster.ErrUnknownTopic),
		errors.Is(err, topic.ErrPartitionOutOfRange),
		errors.Is(err, cluster.ErrUnknownBroker),
		errors.Is(err, cluster.ErrNotAssigned):
		return newAPIError(http.StatusNotFound, CodeNotFound, "%s", tidy(err.Error()))
	case errors.Is(err, log.ErrPayloadTooLarge):
		return newAPIError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "%s", tidy(err.Error()))
	case errors.Is(err, cluster.ErrClosed):
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "the cluster is closed; the server is shutting down")
	case errors.Is(err, cluster.ErrBrokerUnavailable):
		// What lies beneath (a refused connection, a closed pipe) is the
		// network's, for the server log.
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "%s", tidy(through(err, cluster.ErrBrokerUnavailable)))
	case errors.Is(err, backend.ErrNotInThisMode):
		// An operation the serving mode does not offer (cluster mode:
		// stopping a broker, the hand-run repairs): the text says what
		// to do instead.
		return newAPIError(http.StatusConflict, CodeConflict, "%s", tidy(err.Error()))
	case errors.Is(err, backend.ErrNoHealingSwitch):
		return newAPIError(http.StatusConflict, CodeConflict, "this server runs no controller to switch")
	case errors.Is(err, backend.ErrNoController):
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"the cluster has no controller: its metadata group has no leader (an election is under way, or a majority of the nodes is unreachable); try again")
	case errors.Is(err, backend.ErrLeaderMoved):
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"the metadata group's leadership moved while the request was on its way; try again")
	case errors.Is(err, backend.ErrOutcomeUnknown):
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"the metadata group's leader lost its place before the change committed; its outcome is unknown (a majority of the nodes must be reachable)")
	case errors.Is(err, backend.ErrNodeClosed):
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"this node is closed: it is shutting down, or was removed from the metadata group")
	case errors.As(err, &peer) && peer.Kind == backend.ErrPeerBadRequest:
		return newAPIError(http.StatusBadRequest, CodeInvalidArgument, "%s", tidy(peer.Message))
	case errors.As(err, &peer) && peer.Kind == backend.ErrPeerUnavailable:
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable, "the node that was asked cannot serve it now: %s", tidy(peer.Message))
	case errors.As(err, &offCorr):
		what := "a committed offset file"
		if offCorr.Path != "" {
			what = parseDataFile(offCorr.Path).String()
		}
		return newAPIError(http.StatusInternalServerError, CodeInternal, "%s is damaged: %s; it is never overwritten, an operator must deal with it",
			what, tidy(offCorr.Reason))
	case errors.Is(err, client.ErrStoreFailed):
		return newAPIError(http.StatusInternalServerError, CodeInternal,
			"the consumer offset store refuses writes since an earlier write failed; restart the server to reopen it")
	case errors.Is(err, cluster.ErrMetadataFailed):
		return newAPIError(http.StatusInternalServerError, CodeInternal,
			"%s: an earlier write failed and its content is in doubt; restart the server to reopen the cluster", dataFile{kind: fileClusterMeta})
	case errors.As(err, &clMeta):
		return newAPIError(http.StatusInternalServerError, CodeInternal, "%s cannot be trusted: %s", dataFile{kind: fileClusterMeta}, tidy(clMeta.Reason))
	case errors.As(err, &topicMet) && topicMet.Path != "":
		return newAPIError(http.StatusInternalServerError, CodeInternal, "%s cannot be trusted: %s", parseDataFile(topicMet.Path), tidy(topicMet.Reason))
	}
	if m := fileFailure(err); m != "" {
		return newAPIError(http.StatusInternalServerError, CodeInternal, "%s", m)
	}
	return newAPIError(http.StatusInternalServerError, CodeInternal, "internal server error; the server log has the cause")
}

// memberError is a group member's request refused, in the words of
// group.MemberError: a stale epoch or an unknown member is 409 with a
// code of its own, which tells the member to join again; a partition it
// does not hold, or a full group, is a plain conflict.
func memberError(e *group.MemberError) *apiError {
	code := CodeConflict
	switch e.Err {
	case group.ErrFencedMemberEpoch:
		code = CodeFencedMemberEpoch
	case group.ErrUnknownMember:
		code = CodeUnknownMemberID
	}
	return newAPIError(http.StatusConflict, code, "%s", e.Error())
}

// protocolWords names a group protocol for people.
func protocolWords(p group.Protocol) string {
	switch p {
	case group.Classic:
		return "classic (Kafka client)"
	case group.Consumer:
		return "HTTP (consumer protocol)"
	}
	return string(p)
}

// offsetOutOfRange is a read below the log start: 416, with the range
// still readable, as Kafka's OFFSET_OUT_OF_RANGE.
func offsetOutOfRange(oor *client.OffsetOutOfRangeError) *apiError {
	e := newAPIError(http.StatusRequestedRangeNotSatisfiable, CodeOffsetOutOfRange,
		"%s/%d: offset %d is below the log start %d (retention deleted the records before it); fetch from the log start, which is readable up to the high watermark %d",
		oor.Topic, oor.Partition, oor.Offset, oor.LogStart, oor.HighWatermark)
	ls, hw := oor.LogStart, oor.HighWatermark
	e.body.LogStart, e.body.HighWatermark = &ls, &hw
	return e
}

// replicationMessage says which followers did not take which records of a
// partition, and why when their errors say it:
//
//	orders/0: broker 2's replica did not take records 1053..1055 (its log
//	does not end where the leader's did (it lags or is ahead)); not
//	acknowledged: the leader holds them, broker 2 lags until a catch-up
func replicationMessage(re *cluster.ReplicationError) string {
	recs := recordRange(re.Offset, re.Count)
	them := "them"
	if re.Count <= 1 {
		them = "it"
	}
	// Err joins one error per failed follower, in BrokerIDs' order.
	var causes []error
	if j, ok := re.Err.(interface{ Unwrap() []error }); ok {
		causes = j.Unwrap()
	} else if re.Err != nil {
		causes = []error{re.Err}
	}
	if len(causes) != len(re.BrokerIDs) {
		causes = nil
	}
	var b strings.Builder
	if len(re.BrokerIDs) == 1 {
		fmt.Fprintf(&b, "%s/%d: broker %d's replica did not take %s", re.Topic, re.Partition, re.BrokerIDs[0], recs)
		if len(causes) == 1 {
			if c := causeOf(causes[0]); c != "" {
				fmt.Fprintf(&b, " (%s)", c)
			}
		}
		fmt.Fprintf(&b, "; not acknowledged: the leader holds %s, broker %d lags until a catch-up", them, re.BrokerIDs[0])
		return b.String()
	}
	fmt.Fprintf(&b, "%s/%d: brokers %s did not take %s", re.Topic, re.Partition, joinIDs(re.BrokerIDs), recs)
	var why []string
	for i, c := range causes {
		if s := causeOf(c); s != "" {
			why = append(why, fmt.Sprintf("broker %d: %s", re.BrokerIDs[i], s))
		}
	}
	if len(why) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(why, "; "))
	}
	fmt.Fprintf(&b, "; not acknowledged: the leader holds %s, the followers lag until a catch-up", them)
	return b.String()
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
// status, code and message, the stopped brokers named on a 503, and the
// operation's name on the cause the server logs.
func (a *API) opError(op string, err error) *apiError {
	e := a.withUnavailable(classify(err))
	e.cause = fmt.Errorf("%s: %w", op, err)
	return e
}

// relativePaths rewrites the paths under the data directory in msg
// relative to it, as an operator sees them from there (the journal's
// entries name quarantine files so).
func (a *API) relativePaths(msg string) string {
	return rewritePaths(msg, a.root, func(rel string) string {
		if rel == "" {
			return "."
		}
		return rel
	})
}

// classifyBatch answers a produce batch that failed on some partitions with
// the error of the first failed partition (its status and code), the union
// of every failed partition's broker ids, and a message naming each failed
// partition with its own. The per-record outcome is added by the produce
// handler.
func classifyBatch(b *topic.BatchError) *apiError {
	var first *apiError
	var ids []int
	var msgs []string
	for _, p := range slices.Sorted(maps.Keys(b.Partitions)) {
		e := classify(b.Partitions[p])
		if first == nil {
			first = e
		}
		ids = append(ids, e.body.BrokerIDs...)
		msg, where := e.body.Message, fmt.Sprintf("%s/%d", b.Topic, p)
		if !strings.HasPrefix(msg, where+":") {
			msg = where + ": " + msg
		}
		msgs = append(msgs, msg)
	}
	if first == nil {
		return newAPIError(http.StatusInternalServerError, CodeInternal, "topic %q: the batch failed; the server log has the cause", b.Topic)
	}
	msg := msgs[0]
	if len(msgs) > 1 {
		msg = fmt.Sprintf("the write failed on %d partitions of topic %q: %s", len(msgs), b.Topic, strings.Join(msgs, "; "))
	}
	slices.Sort(ids)
	return &apiError{status: first.status, body: ErrorBody{Code: first.body.Code, Message: msg, BrokerIDs: slices.Compact(ids)}}
}
