package replication

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// Codes of an *Error: what the caller does about it.
const (
	// CodeStaleEpoch: the request's leader epoch is older than the
	// replica's; the sender is no longer the leader (it is fenced).
	CodeStaleEpoch = "stale-epoch"
	// CodeEpochAhead: the request's epoch is newer than the metadata the
	// replica has applied; try again shortly.
	CodeEpochAhead = "epoch-ahead"
	// CodeBehind: the replica's log ends before the records sent begin.
	CodeBehind = "behind"
	// CodeDiverged: the replica holds other records at the offsets sent.
	CodeDiverged = "diverged"
	// CodeNotLeader: this node does not lead (the partition, or Raft).
	CodeNotLeader = "not-leader"
	// CodeRefused: the operation was refused by a rule; Reason names it.
	CodeRefused = "refused"
	// CodeNotReplicated: the leader stored the records but not every
	// active follower did; they are not acknowledged.
	CodeNotReplicated = "not-replicated"
	// CodeLeaderUnavailable: the partition's leader cannot take or serve
	// records now (its log failed).
	CodeLeaderUnavailable = "leader-unavailable"
	// CodeBadRequest: the request was malformed.
	CodeBadRequest = "bad-request"
	// CodeUnavailable: the node cannot serve it now (closing, not ready,
	// a broker that is down).
	CodeUnavailable = "unavailable"
	// CodeOffsetOutOfRange: a committed read asked for an offset below the
	// leader's log start.
	CodeOffsetOutOfRange = "offset-out-of-range"
)

// ErrRemote is wrapped by every *Error.
var ErrRemote = errors.New("replication: refused by the peer")

// Error is a refusal by a peer, as it travels on the wire: a Code the
// caller acts on, the refusing node's message, and — for PyStream's own
// errors — Reason, the name of the error (a sentinel's, or a typed
// error's), and Detail, the typed error's fields. DecodeError turns it
// back into the error the refusing node returned, so that errors.Is and
// errors.As work on either side of the network alike.
type Error struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Reason  string          `json:"reason,omitempty"`
	Detail  json.RawMessage `json:"detail,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("replication: %s: %s", e.Code, e.Message)
}

// Unwrap returns ErrRemote.
func (e *Error) Unwrap() error { return ErrRemote }

// Errorf builds an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns err's code when it is an *Error, "" otherwise.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// wireType is one typed error that travels with its fields.
type wireType struct {
	name string
	code string
	// as reports whether err itself (not its causes) is the typed error,
	// and its fields.
	as func(err error) (any, bool)
	// decode rebuilds it from its fields and the message.
	decode func(detail []byte, msg string) (error, bool)
}

// typed is the wireType of *T, an error of plain fields.
func typed[T any, P interface {
	*T
	error
}](name, code string) wireType {
	return wireType{name: name, code: code,
		as: func(err error) (any, bool) {
			p, ok := err.(P)
			return p, ok
		},
		decode: func(b []byte, _ string) (error, bool) {
			p := P(new(T))
			if json.Unmarshal(b, p) != nil {
				return nil, false
			}
			return p, true
		}}
}

// replicationFields are the fields of a *cluster.ReplicationError; its
// followers' errors travel as the message.
type replicationFields struct {
	Topic     string
	Partition int
	Offset    uint64
	Count     int
	BrokerIDs []int
}

// leaderFields are the fields of a *cluster.LeaderUnavailableError.
type leaderFields struct {
	Topic     string
	Partition int
	BrokerID  int
}

// wireTypes lists every typed error that keeps its type across the
// network, first match first.
var wireTypes = []wireType{
	typed[cluster.NotLeaderError]("not-leader", CodeNotLeader),
	typed[cluster.StaleEpochError]("stale-epoch", CodeStaleEpoch),
	typed[cluster.EpochAheadError]("epoch-ahead", CodeEpochAhead),
	typed[cluster.BehindError]("behind", CodeBehind),
	typed[client.OffsetOutOfRangeError]("offset-out-of-range", CodeOffsetOutOfRange),
	{name: "not-replicated", code: CodeNotReplicated,
		as: func(err error) (any, bool) {
			if e, ok := err.(*cluster.ReplicationError); ok {
				return replicationFields{e.Topic, e.Partition, e.Offset, e.Count, e.BrokerIDs}, true
			}
			return nil, false
		},
		decode: func(b []byte, msg string) (error, bool) {
			var f replicationFields
			if json.Unmarshal(b, &f) != nil {
				return nil, false
			}
			return &cluster.ReplicationError{Topic: f.Topic, Partition: f.Partition, Offset: f.Offset, Count: f.Count, BrokerIDs: f.BrokerIDs,
				Err: errors.New(msg)}, true
		}},
	{name: "leader-unavailable", code: CodeLeaderUnavailable,
		as: func(err error) (any, bool) {
			if e, ok := err.(*cluster.LeaderUnavailableError); ok {
				return leaderFields{e.Topic, e.Partition, e.BrokerID}, true
			}
			return nil, false
		},
		decode: func(b []byte, msg string) (error, bool) {
			var f leaderFields
			if json.Unmarshal(b, &f) != nil {
				return nil, false
			}
			return &cluster.LeaderUnavailableError{Topic: f.Topic, Partition: f.Partition, BrokerID: f.BrokerID,
				Err: fmt.Errorf("%s: %w", msg, cluster.ErrBrokerUnavailable)}, true
		}},
	typed[cluster.ReplicaDivergenceError]("diverged", CodeDiverged),
	typed[cluster.ProducerError]("producer", CodeRefused),
	typed[cluster.DuplicateNotCommittedError]("duplicate-not-committed", CodeUnavailable),
	typed[cluster.NotEnoughReplicasError]("not-enough-replicas", CodeUnavailable),
	typed[cluster.TopicExistsError]("topic-exists", CodeRefused),
	typed[cluster.TopicNameConflictError]("topic-name-conflict", CodeRefused),
	typed[cluster.DeletionPendingError]("deletion-pending", CodeRefused),
	typed[cluster.LeaderStillAvailableError]("leader-still-available", CodeRefused),
	typed[cluster.NoEligibleReplicaError]("no-eligible-replica", CodeRefused),
	typed[cluster.OpenLogsLimitError]("open-logs-limit", CodeRefused),
	typed[client.OffsetRegressionError]("offset-regression", CodeRefused),
	typed[client.OffsetBeyondEndError]("offset-beyond-end", CodeRefused),
	typed[topic.ConfigError]("invalid-config", CodeRefused),
}

// sentinels names the sentinels a refusal can carry across the network,
// each with the code it travels under, so that a node that forwarded a
// request reports it as the node that refused it would.
var sentinels = []struct {
	name string
	code string
	err  error
}{
	{"unknown-topic", CodeRefused, cluster.ErrUnknownTopic},
	{"topic-exists", CodeRefused, cluster.ErrTopicExists},
	{"invalid-partition-count", CodeRefused, cluster.ErrInvalidPartitionCount},
	{"invalid-replication-factor", CodeRefused, cluster.ErrInvalidReplicationFactor},
	{"stale-action", CodeRefused, cluster.ErrStaleAction},
	{"stale-transaction", CodeRefused, cluster.ErrStaleTransaction},
	{"not-assigned", CodeRefused, cluster.ErrNotAssigned},
	{"replica-is-leader", CodeRefused, cluster.ErrReplicaIsLeader},
	{"replica-active", CodeRefused, cluster.ErrReplicaActive},
	{"replica-inactive", CodeRefused, cluster.ErrReplicaInactive},
	{"invalid-broker-id", CodeRefused, cluster.ErrInvalidBrokerID},
	{"addr-taken", CodeRefused, cluster.ErrAddrTaken},
	{"unknown-broker", CodeRefused, cluster.ErrUnknownBroker},
	{"healing-off", CodeRefused, cluster.ErrHealingOff},
	{"delete-unfinished", CodeRefused, cluster.ErrDeleteUnfinished},
	{"broker-is-process", CodeRefused, cluster.ErrBrokerIsProcess},
	{"replica-missing", CodeRefused, cluster.ErrReplicaMissing},
	{"invalid-argument", CodeRefused, cluster.ErrInvalidArgument},
	{"journal-failed", CodeRefused, cluster.ErrJournalFailed},
	{"past-high-watermark", CodeRefused, cluster.ErrPastHighWatermark},
	{"partition-out-of-range", CodeRefused, topic.ErrPartitionOutOfRange},
	{"invalid-name", CodeRefused, topic.ErrInvalidName},
	{"invalid-config", CodeRefused, topic.ErrInvalidConfig},
	{"payload-too-large", CodeRefused, log.ErrPayloadTooLarge},
	{"no-controller", CodeUnavailable, cluster.ErrNoController},
	{"not-ready", CodeUnavailable, cluster.ErrNotReady},
	{"broker-unavailable", CodeUnavailable, cluster.ErrBrokerUnavailable},
	{"closed", CodeUnavailable, cluster.ErrClosed},
	{"busy", CodeUnavailable, ErrBusy},
}

// ErrBusy is a request refused before its body was read because the
// bodies in flight on the node's internal port would pass their budget
// (InflightLimit): retriable, as every CodeUnavailable.
var ErrBusy = errors.New("replication: busy: request bodies in flight at their limit")

// EncodeError turns what a node's Peer returned into the *Error that
// travels: the outermost of the errors in its chain that PyStream knows —
// an *Error as it is, one of its typed errors with its fields — so that a
// typed error keeps its type even when its cause is another (a
// *cluster.ReplicationError whose followers answered BehindError); else a
// sentinel by its name; anything else as CodeUnavailable with its text.
func EncodeError(err error) *Error {
	var out *Error
	walk(err, func(e error) bool {
		if we, ok := e.(*Error); ok {
			out = we
			return true
		}
		for _, w := range wireTypes {
			v, ok := w.as(e)
			if !ok {
				continue
			}
			detail, jerr := json.Marshal(v)
			if jerr != nil {
				return false
			}
			msg := err.Error()
			if re, ok := e.(*cluster.ReplicationError); ok && re.Err != nil {
				msg = re.Err.Error() // the followers' errors; the rest travels in fields
			}
			out = &Error{Code: w.code, Message: msg, Reason: w.name, Detail: detail}
			return true
		}
		return false
	})
	if out != nil {
		return out
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return &Error{Code: s.code, Message: err.Error(), Reason: s.name}
		}
	}
	return &Error{Code: CodeUnavailable, Message: err.Error()}
}

// walk visits err's chain outermost first, depth first, until visit says
// it is done; it reports whether it was.
func walk(err error, visit func(error) bool) bool {
	for err != nil {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e, visit) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// DecodeError turns an *Error back into the error its node returned: the
// typed error rebuilt from its fields, or an error with the node's message
// that wraps the named sentinel. An *Error PyStream does not know stays as
// it is.
func DecodeError(e *Error) error {
	if e.Reason != "" && len(e.Detail) > 0 {
		for _, w := range wireTypes {
			if w.name == e.Reason {
				if err, ok := w.decode(e.Detail, e.Message); ok {
					return err
				}
			}
		}
	}
	for _, s := range sentinels {
		if s.name == e.Reason {
			return &remoteError{e: e, sentinel: s.err}
		}
	}
	return e
}

// remoteError is a refusal that crossed the network: its text is the
// refusing node's, and it wraps both the sentinel its name stands for and
// the *Error it came as.
type remoteError struct {
	e        *Error
	sentinel error
}

func (r *remoteError) Error() string { return r.e.Message }

// Unwrap returns the sentinel and the wire error.
func (r *remoteError) Unwrap() []error { return []error{r.sentinel, r.e} }
