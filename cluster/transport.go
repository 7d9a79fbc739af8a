package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/pystream/pystream/log"
)

// This file is the replica transport: what one broker asks of another's
// replicas, and how it is answered. The replication core (the leader's
// write path, the follower's side, catch-up, recovery, failover, leader
// moves, retention) is written once over it. A Cluster opened with Open
// hosts every broker in one process, and its transport is function calls
// from one broker to another (localTransport); in cluster mode each
// process hosts one broker, and the server's network transport
// (server/replication) carries the same requests and answers, and the
// typed errors below, between processes.

// Transport carries requests from the brokers a Cluster hosts to any
// broker, itself included, by broker id. A broker that cannot be reached
// is an error wrapping ErrBrokerUnavailable. Implementations must be safe
// for concurrent use and must honour ctx.
type Transport interface {
	// Replicate is a leader's write (or probe) to one of its followers
	// (Cluster.Replicate answers it).
	Replicate(ctx context.Context, to int, req ReplicateRequest) (ReplicateResponse, error)
	// Records reads a broker's replica (Cluster.Records).
	Records(ctx context.Context, to int, req RecordsRequest) (RecordsResponse, error)
	// Digests summarises a broker's replica, chunk by chunk
	// (Cluster.Digests).
	Digests(ctx context.Context, to int, req DigestsRequest) (DigestsResponse, error)
	// Cut truncates a follower's replica at its leader's request
	// (Cluster.Cut).
	Cut(ctx context.Context, to int, req CutRequest) (CutResponse, error)
	// Produce writes records through the partition's leader
	// (Cluster.Produce).
	Produce(ctx context.Context, to int, req ProduceRequest) (ProduceResponse, error)
	// OffsetForTime searches the partition's leader by time
	// (Cluster.OffsetForTimeRequest).
	OffsetForTime(ctx context.Context, to int, req OffsetForTimeRequest) (OffsetForTimeResponse, error)
	// Operate runs an operation on the broker that must run it: the
	// partition's leader for catch-up, recovery, a leader move and
	// retention, the controller for a failover (Cluster.Operate).
	Operate(ctx context.Context, to int, req OperateRequest) (OperateResponse, error)
}

// ReplicateRequest is a leader's write to one follower: records that
// continue the follower's log, at the leader's epoch. With no records it is
// a probe that proves the follower (at a new epoch), gives it the leader's
// log start and high watermark, and asks for its log end.
type ReplicateRequest struct {
	Topic     string
	Partition int
	// Epoch is the leader epoch the sender leads at; Leader its id.
	Epoch  uint64
	Leader int
	// HighWatermark is the leader's: every active replica holds every
	// record below it.
	HighWatermark uint64
	// LogStart is the leader's log start: the follower drops what lies
	// below it, as the leader's retention did, or, when its log ends below
	// it, starts again empty there.
	LogStart uint64
	// Records are consecutive, from the first one's offset.
	Records []log.Record
	// Runs are the runs of the leader's epoch history that hold Records
	// (the first starting at or before the first record): the follower's
	// history takes them (epochs.go). With none, the records count as an
	// unknown run there.
	Runs []EpochRun
	// LogStartOnly asks the follower to take LogStart and nothing else:
	// no proof, no append. A retention pass tells every replica it can
	// reach, active or not.
	LogStartOnly bool
	// Reset, with LogStartOnly, lets a follower whose log ends below
	// LogStart start again empty there (a catch-up or a recovery, which
	// journal it); without it such a log is left for them.
	Reset bool
	// Reopen asks the follower to reopen its replica's log first when a
	// write failed on it (a full disk): a catch-up copies onto what really
	// is on disk.
	Reopen bool
}

// ReplicateResponse says the follower holds every record up to End,
// durably, from LogStart.
type ReplicateResponse struct {
	End      uint64 `json:"end"`
	LogStart uint64 `json:"log_start"`
	// Removed are the segments the follower deleted to take the leader's
	// log start; Reset is set when its log ended below that start and it
	// started again empty there, ResetFrom being its log end before.
	Removed   []RemovedSegment `json:"removed,omitempty"`
	Reset     bool             `json:"reset,omitempty"`
	ResetFrom uint64           `json:"reset_from,omitempty"`
	// Reopened is set when Reopen reopened a failed log.
	Reopened bool `json:"reopened,omitempty"`
}

// RecordsRequest reads a broker's replica.
type RecordsRequest struct {
	Topic     string
	Partition int
	From      uint64
	// MaxBytes bounds the frames returned (at least one record is
	// returned when any is there); 0 asks only for the bounds.
	MaxBytes int
	// MaxRecords, when positive, bounds the number of records too.
	MaxRecords int
	// Committed reads only below the high watermark, from the partition's
	// leader alone (a consumer's read); otherwise any replica is read up to
	// its log end (a follower's proof, a comparison).
	Committed bool
	// Stable, with Committed, reads only below the last stable offset
	// (a read_committed consumer's read, markers.go) and reports the
	// aborted transactions among the records read.
	Stable bool
	// Runs asks for the replica's leader-epoch history too (a
	// comparison of two replicas, compare.go).
	Runs bool
}

// RecordsResponse is a read's records and the replica's bounds when read.
// A read from below LogStart that is not Committed gets no records: the
// reader learns where the log starts now. A Committed read below it is a
// *client.OffsetOutOfRangeError.
type RecordsResponse struct {
	Records       []log.Record
	LogStart      uint64
	LogEnd        uint64
	HighWatermark uint64
	// LastStable and Aborted answer a Stable read: the last stable
	// offset, and the aborted transactions with records among Records.
	LastStable uint64
	Aborted    []AbortedTxn
	// Runs answers a request with Runs: the replica's leader-epoch
	// history (the last run may start at LogEnd, written down just before
	// its first record).
	Runs []EpochRun
}

// DigestsRequest asks for a replica's records [From, To) summarised in
// chunks of Chunk records (the last may be shorter).
type DigestsRequest struct {
	Topic     string
	Partition int
	From, To  uint64
	Chunk     int
}

// DigestsResponse holds one Digest per chunk, in order; it stops early,
// with fewer, where the replica's log ends.
type DigestsResponse struct {
	Digests []Digest `json:"digests"`
}

// Digest is the SHA-256 of a run of records: each record's offset and
// timestamp (8 bytes each, big-endian), payload length (4 bytes) and
// payload, in order. Two replicas with the same digest over the same
// offsets hold the same records: offset, timestamp and payload.
type Digest [sha256.Size]byte

// MarshalText renders the digest in hexadecimal.
func (d Digest) MarshalText() ([]byte, error) { return hex.AppendEncode(nil, d[:]), nil }

// UnmarshalText reads MarshalText's form.
func (d *Digest) UnmarshalText(b []byte) error {
	var out Digest
	if len(b) != hex.EncodedLen(len(out)) {
		return fmt.Errorf("cluster: digest of %d hex digits, want %d: %w", len(b), hex.EncodedLen(len(out)), ErrInvalidArgument)
	}
	if _, err := hex.Decode(out[:], b); err != nil {
		return fmt.Errorf("cluster: digest: %w: %w", ErrInvalidArgument, err)
	}
	*d = out
	return nil
}

// DigestRecords is the Digest of recs.
func DigestRecords(recs []log.Record) Digest {
	h := sha256.New()
	var hdr [20]byte
	for _, r := range recs {
		putUint64(hdr[0:8], r.Offset)
		putUint64(hdr[8:16], uint64(r.Timestamp))
		putUint32(hdr[16:20], uint32(len(r.Payload)))
		h.Write(hdr[:])
		h.Write(r.Payload)
	}
	var d Digest
	h.Sum(d[:0])
	return d
}

func putUint64(b []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

func putUint32(b []byte, v uint32) {
	for i := 3; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// CutRequest asks a follower, by its leader at its epoch, to truncate its
// replica to To: the records from To on were never acknowledged. With
// Quarantine they are first copied, durably, into a quarantine file beside
// the log (QuarantinePath, stamped At); PyStream never deletes it.
type CutRequest struct {
	Topic      string    `json:"topic"`
	Partition  int       `json:"partition"`
	Epoch      uint64    `json:"epoch"`
	Leader     int       `json:"leader"`
	To         uint64    `json:"to"`
	Quarantine bool      `json:"quarantine"`
	At         time.Time `json:"at"`
}

// CutResponse says what a cut removed: offsets From up to, not including,
// To ("" Quarantine and From == To when there was nothing to cut), and
// the quarantine file, relative to the follower's data directory.
type CutResponse struct {
	From       uint64 `json:"from"`
	To         uint64 `json:"to"`
	Quarantine string `json:"quarantine,omitempty"`
	// Path is the quarantine file as the follower's machine names it.
	Path string `json:"path,omitempty"`
}

// ProduceRequest is a write forwarded to a partition's leader.
type ProduceRequest struct {
	Topic     string
	Partition int
	Payloads  [][]byte
}

// RecordPosition is where the leader put one record.
type RecordPosition struct {
	Offset    uint64 `json:"offset"`
	Timestamp int64  `json:"timestamp"`
}

// ProduceResponse places every payload, in order, and names the brokers
// that hold them: the leader and its active followers.
type ProduceResponse struct {
	Records []RecordPosition `json:"records"`
	Brokers []int            `json:"brokers"`
	Leader  int              `json:"leader"`
}

// OffsetForTimeRequest asks a partition's leader for the first offset
// whose record's timestamp (nanoseconds since the epoch) is at or after
// Timestamp (Cluster.OffsetForTime).
type OffsetForTimeRequest struct {
	Topic     string
	Partition int
	Timestamp int64
}

// OffsetForTimeResponse is the leader's answer: Found false means no
// record below the high watermark is that late, and Offset is the high
// watermark.
type OffsetForTimeResponse struct {
	Offset uint64 `json:"offset"`
	Found  bool   `json:"found"`
}

// Operations that run where they must (OperateRequest.Op).
const (
	OperateCatchUp    = "catch-up"
	OperateRecover    = "recover"
	OperateMoveLeader = "move-leader"
	OperateFailover   = "failover"
	OperateReopen     = "reopen-broker"
	OperateStatus     = "status"
	// OperateLogStart raises a partition's log start (AdvanceLogStart),
	// on its leader's process.
	OperateLogStart = "log-start"
	// OperateVersion runs nothing: its answer says how far the process's
	// copy of the metadata has come (OperateResponse.Version).
	OperateVersion = "version"
)

// OperateRequest asks a broker's process to run an operation that must
// run there: the partition's leader pauses its own writes for a catch-up,
// a recovery or a leader move; the controller knows which brokers are up
// for a failover. Epoch, when set, must still be the partition's (an
// action of the controller's plan).
type OperateRequest struct {
	Op        string  `json:"op"`
	Topic     string  `json:"topic,omitempty"`
	Partition int     `json:"partition"`
	Broker    int     `json:"broker,omitempty"`
	Epoch     *uint64 `json:"epoch,omitempty"`
	By        string  `json:"by,omitempty"`
	Reason    string  `json:"reason,omitempty"`
	// Offset is the new log start of an OperateLogStart.
	Offset uint64 `json:"offset,omitempty"`
}

// OperateResponse carries the operation's result, the JSON of its result
// type (CatchUpResult, RecoveryResult, MoveResult, FailoverResult,
// ReopenResult, PartitionStatus, RetentionResult).
type OperateResponse struct {
	Result json.RawMessage `json:"result"`
	// Version is the running process's MetaStore.Version once the
	// operation was done: the asking process waits for its own copy to
	// come as far before it answers.
	Version uint64 `json:"version,omitempty"`
}

// Consecutive reports whether recs have consecutive offsets.
func Consecutive(recs []log.Record) bool {
	for i := 1; i < len(recs); i++ {
		if recs[i-1].Offset == math.MaxUint64 || recs[i].Offset != recs[i-1].Offset+1 {
			return false
		}
	}
	return true
}

// The errors a broker answers a request of the transport with, which the
// network transport carries between processes with their fields.

// NotLeaderError: the request needs the partition's leader, and this
// broker does not lead it; Leader does (0 when none is known).
type NotLeaderError struct {
	Topic     string
	Partition int
	Broker    int
	Leader    int
}

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("cluster: %s/%d: broker %d does not lead it, broker %d does", e.Topic, e.Partition, e.Broker, e.Leader)
}

// Is matches ErrNotLeader.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// StaleEpochError: a request from a leader whose epoch is over (it was
// replaced, and is fenced), or from a broker that does not lead at
// Epoch.
type StaleEpochError struct {
	Topic     string
	Partition int
	// Epoch is the partition's epoch as the follower knows it; Asked the
	// request's.
	Epoch, Asked uint64
	Reason       string
}

func (e *StaleEpochError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("cluster: %s/%d: %s", e.Topic, e.Partition, e.Reason)
	}
	return fmt.Sprintf("cluster: %s/%d is at leader epoch %d; epoch %d is over", e.Topic, e.Partition, e.Epoch, e.Asked)
}

// Is matches ErrStaleEpoch.
func (e *StaleEpochError) Is(target error) bool { return target == ErrStaleEpoch }

// EpochAheadError: a request at an epoch the follower's copy of the
// metadata has not reached yet; the sender tries again.
type EpochAheadError struct {
	Topic        string
	Partition    int
	Epoch, Asked uint64
}

func (e *EpochAheadError) Error() string {
	return fmt.Sprintf("cluster: %s/%d: this broker has applied epoch %d, not yet %d", e.Topic, e.Partition, e.Epoch, e.Asked)
}

// Is matches ErrEpochAhead.
func (e *EpochAheadError) Is(target error) bool { return target == ErrEpochAhead }

// BehindError: the records sent start past the follower's log end; the
// leader sends what lies between first.
type BehindError struct {
	Topic     string
	Partition int
	End       uint64
	Base      uint64
}

func (e *BehindError) Error() string {
	return fmt.Sprintf("cluster: %s/%d ends at %d, before %d", e.Topic, e.Partition, e.End, e.Base)
}

// Is matches ErrBehind.
func (e *BehindError) Is(target error) bool { return target == ErrBehind }
