package replication

import (
	"errors"
	"fmt"
)

// Codes of an *Error.
const (
	// CodeStaleEpoch: the request's leader epoch is older than the
	// replica's; the sender is no longer the leader (it is fenced).
	CodeStaleEpoch = "stale-epoch"
	// CodeEpochAhead: the request's epoch is newer than the metadata the
	// replica has applied; try again shortly.
	CodeEpochAhead = "epoch-ahead"
	// CodeBehind: the replica's log ends before the records sent begin;
	// End says where it ends.
	CodeBehind = "behind"
	// CodeDiverged: the replica holds other records at the offsets sent.
	CodeDiverged = "diverged"
	// CodeNotLeader: this node does not lead (the partition, or Raft);
	// Leader names the one that does when known.
	CodeNotLeader = "not-leader"
	// CodeNotAssigned: this node holds no replica of the partition.
	CodeNotAssigned = "not-assigned"
	// CodeRefused: the operation was refused; Reason names the rule
	// (a cluster sentinel's name, such as "unknown-topic").
	CodeRefused = "refused"
	// CodeNotReplicated: the leader stored the records but not every
	// active follower did; they are not acknowledged. Offset, Count and
	// Brokers say which records and which followers.
	CodeNotReplicated = "not-replicated"
	// CodeBadRequest: the request was malformed.
	CodeBadRequest = "bad-request"
	// CodeUnavailable: the node cannot serve it now (closing, a log that
	// failed).
	CodeUnavailable = "unavailable"
	// CodeOffsetOutOfRange: a committed read asked for an offset below the
	// leader's log start (retention deleted the records there); Offset,
	// LogStart and HighWatermark say where and what is readable, so a
	// client of any node gets the same answer as from the leader.
	CodeOffsetOutOfRange = "offset-out-of-range"
)

// ErrRemote is wrapped by every *Error.
var ErrRemote = errors.New("replication: refused by the peer")

// Error is a refusal by a peer, as it travels on the wire.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Reason refines CodeRefused.
	Reason string `json:"reason,omitempty"`
	// End is the replica's log end (CodeBehind, CodeDiverged).
	End uint64 `json:"end,omitempty"`
	// Epoch is the replica's leader epoch (CodeStaleEpoch).
	Epoch uint64 `json:"epoch,omitempty"`
	// Leader is the node that leads, when known (CodeNotLeader).
	Leader int `json:"leader,omitempty"`
	// Offset, Count and Brokers describe records not replicated
	// (CodeNotReplicated).
	Offset  uint64 `json:"offset,omitempty"`
	Count   int    `json:"count,omitempty"`
	Brokers []int  `json:"brokers,omitempty"`
	// LogStart and HighWatermark are the readable range of the partition
	// (CodeOffsetOutOfRange, with Offset the offset asked for).
	LogStart      uint64 `json:"log_start,omitempty"`
	HighWatermark uint64 `json:"high_watermark,omitempty"`
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
