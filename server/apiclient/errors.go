package apiclient

import (
	"errors"
	"fmt"
	"time"
)

// Sentinels, one per error code of the contract. An *Error matches the
// sentinel of its code with errors.Is:
//
//	if errors.Is(err, apiclient.ErrNotFound) { ... }
var (
	// ErrInvalidArgument: the request was malformed or a value out of range (400).
	ErrInvalidArgument = errors.New("apiclient: invalid argument")
	// ErrNotFound: unknown path, topic, partition, broker or consumer (404).
	ErrNotFound = errors.New("apiclient: not found")
	// ErrMethodNotAllowed: the path exists but not for this method (405).
	ErrMethodNotAllowed = errors.New("apiclient: method not allowed")
	// ErrConflict: offset regression, an offset committed or reset past
	// the high watermark, topic exists with other settings,
	// failover while the leader is alive, replica already active,
	// divergence (409).
	ErrConflict = errors.New("apiclient: conflict")
	// ErrPayloadTooLarge: the request body or a record is too large (413).
	ErrPayloadTooLarge = errors.New("apiclient: payload too large")
	// ErrUnsupportedMediaType: wrong Content-Type (415).
	ErrUnsupportedMediaType = errors.New("apiclient: unsupported media type")
	// ErrUnavailable: leader unavailable, replication failed or no eligible
	// replica (503).
	ErrUnavailable = errors.New("apiclient: unavailable")
	// ErrInternal: a server-side failure (500).
	ErrInternal = errors.New("apiclient: internal server error")
	// ErrInsufficientStorage: a write met a full disk on the named broker
	// (or the data directory); nothing was acknowledged (507).
	ErrInsufficientStorage = errors.New("apiclient: insufficient storage")
	// ErrUnauthenticated: no token, or one the server does not know (401).
	ErrUnauthenticated = errors.New("apiclient: unauthenticated")
	// ErrPermissionDenied: the token may not do this, or not on this
	// topic (403).
	ErrPermissionDenied = errors.New("apiclient: permission denied")
	// ErrOffsetOutOfRange: a fetch below the partition's log start; the
	// error is an *OffsetOutOfRangeError (416).
	ErrOffsetOutOfRange = errors.New("apiclient: offset out of range")
	// ErrFencedMemberEpoch: a group member's heartbeat or commit sent an
	// epoch that is not its current one; it joins again (409, also
	// ErrConflict).
	ErrFencedMemberEpoch = errors.New("apiclient: fenced member epoch")
	// ErrUnknownMemberID: the group has no such member (it left or timed
	// out); it joins again (409, also ErrConflict).
	ErrUnknownMemberID = errors.New("apiclient: unknown member id")
	// ErrNotCoordinator: a group request reached a node that does not
	// coordinate groups, and the Client could not follow it (421).
	ErrNotCoordinator = errors.New("apiclient: not the group coordinator")
	// ErrOutOfOrderSequence, ErrInvalidProducerEpoch, ErrUnknownProducer
	// and ErrDuplicateSequence: an idempotent producer's request refused
	// by the partition's leader, nothing written (409, also ErrConflict);
	// see the Code constants of the same names.
	ErrOutOfOrderSequence   = errors.New("apiclient: out of order sequence number")
	ErrInvalidProducerEpoch = errors.New("apiclient: invalid producer epoch")
	ErrUnknownProducer      = errors.New("apiclient: unknown producer id")
	ErrDuplicateSequence    = errors.New("apiclient: duplicate sequence number")
	// ErrInvalidProducerBatch: an idempotent producer's request whose
	// records are not its consecutive sequence numbers (400, also
	// ErrInvalidArgument).
	ErrInvalidProducerBatch = errors.New("apiclient: invalid producer batch")
	// ErrUnexpectedResponse: the server answered something that is not the
	// contract (a non-JSON body, an unknown status). Wrapped with detail.
	ErrUnexpectedResponse = errors.New("apiclient: unexpected response")
	// ErrTLSFiles: LoadTLSConfig could not build a TLS configuration from
	// the files it was given (unreadable, not PEM, key and certificate
	// apart or not matching). Wrapped with detail.
	ErrTLSFiles = errors.New("apiclient: TLS files")
)

// codeSentinels maps each contract code to its sentinel.
var codeSentinels = map[string]error{
	CodeInvalidArgument:      ErrInvalidArgument,
	CodeNotFound:             ErrNotFound,
	CodeMethodNotAllowed:     ErrMethodNotAllowed,
	CodeConflict:             ErrConflict,
	CodePayloadTooLarge:      ErrPayloadTooLarge,
	CodeUnsupportedMediaType: ErrUnsupportedMediaType,
	CodeUnavailable:          ErrUnavailable,
	CodeInternal:             ErrInternal,
	CodeInsufficientStorage:  ErrInsufficientStorage,
	CodeUnauthenticated:      ErrUnauthenticated,
	CodePermissionDenied:     ErrPermissionDenied,
	CodeOffsetOutOfRange:     ErrOffsetOutOfRange,
	CodeFencedMemberEpoch:    ErrFencedMemberEpoch,
	CodeUnknownMemberID:      ErrUnknownMemberID,
	CodeNotCoordinator:       ErrNotCoordinator,
	CodeOutOfOrderSequence:   ErrOutOfOrderSequence,
	CodeInvalidProducerEpoch: ErrInvalidProducerEpoch,
	CodeUnknownProducer:      ErrUnknownProducer,
	CodeDuplicateSequence:    ErrDuplicateSequence,
	CodeInvalidProducerBatch: ErrInvalidProducerBatch,
}

// codeKinds maps a code that refines another to the sentinel it also
// matches: a fenced or unknown member, and a producer's sequence refused,
// is a conflict.
var codeKinds = map[string]error{
	CodeFencedMemberEpoch:    ErrConflict,
	CodeUnknownMemberID:      ErrConflict,
	CodeOutOfOrderSequence:   ErrConflict,
	CodeInvalidProducerEpoch: ErrConflict,
	CodeUnknownProducer:      ErrConflict,
	CodeDuplicateSequence:    ErrConflict,
	CodeInvalidProducerBatch: ErrInvalidArgument,
}

// Error is a non-2xx answer of the server, decoded from the error envelope.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Code is the contract's error code (CodeNotFound, ...). When the body
	// was not an error envelope, Code is empty.
	Code string
	// Message is the server's explanation, for people.
	Message string
	// RequestID is the server's id of the request (the body's request_id,
	// else the X-Request-Id header): the server log has the full error
	// under it. Empty when the server sent neither.
	RequestID string
	// BrokerIDs names the brokers involved (unavailable, divergence).
	BrokerIDs []int
	// Committed and Requested are set on an offset regression (409).
	Committed, Requested *uint64
	// HighWatermark (with Requested) is set on a commit or reset past the
	// partition's high watermark (409), and on an offset out of range
	// (416, with LogStart).
	HighWatermark *uint64
	// LogStart is set on an offset out of range (416).
	LogStart *uint64
	// Records is set on a failed produce: per input record, its placement
	// or its own error.
	Records []ProduceResult
	// Coordinator is the host:port of the node that coordinates groups,
	// on CodeNotCoordinator.
	Coordinator string
	// RetryAfter is the answer's Retry-After (whole seconds), when it
	// had one: how long to wait before sending the request again (a 503,
	// a 429).
	RetryAfter time.Duration
}

// Error implements error with the server's message, and the request id
// when there is one.
func (e *Error) Error() string {
	id := ""
	if e.RequestID != "" {
		id = ", request " + e.RequestID
	}
	if e.Code == "" {
		return fmt.Sprintf("apiclient: HTTP %d%s: %s", e.Status, id, e.Message)
	}
	return fmt.Sprintf("apiclient: %s (HTTP %d %s%s)", e.Message, e.Status, e.Code, id)
}

// Is reports whether target is the sentinel of e's code, or the one that
// code refines (ErrConflict for the group member codes).
func (e *Error) Is(target error) bool {
	if k, ok := codeKinds[e.Code]; ok && k == target {
		return true
	}
	s, ok := codeSentinels[e.Code]
	return ok && s == target
}

// OffsetOutOfRangeError is a fetch's 416 answer: the offset asked for is
// below the partition's log start, its records deleted by retention. It
// carries the range still readable; errors.Is(err, ErrOffsetOutOfRange) is
// true, and errors.As to *Error finds the whole answer.
type OffsetOutOfRangeError struct {
	// Topic, Partition and Offset are the fetch's, when the call knows
	// them (Fetch and FetchBytes set them).
	Topic     string
	Partition int
	Offset    uint64
	// LogStart is the first readable offset; HighWatermark the end of
	// what is readable.
	LogStart, HighWatermark uint64
	// Err is the server's answer.
	Err *Error
}

func (e *OffsetOutOfRangeError) Error() string {
	if e.Topic == "" {
		return fmt.Sprintf("apiclient: offset out of range: log start %d, high watermark %d: %v", e.LogStart, e.HighWatermark, e.Err)
	}
	return fmt.Sprintf("apiclient: fetch %s/%d at %d: offset below the log start %d (high watermark %d): %v",
		e.Topic, e.Partition, e.Offset, e.LogStart, e.HighWatermark, e.Err)
}

// Unwrap returns the server's answer, an *Error.
func (e *OffsetOutOfRangeError) Unwrap() error { return e.Err }
