package replication

import (
	"fmt"
	"math"

	"github.com/pystream/pystream/log"
)

// ReplicateRequest is a leader's write to one follower: records that
// follow on from the follower's log end, at the leader's epoch.
type ReplicateRequest struct {
	Topic     string
	Partition int
	// Epoch is the leader epoch the sender leads at; Leader its id.
	Epoch  uint64
	Leader int
	// HighWatermark is the leader's: the follower serves nothing above it.
	HighWatermark uint64
	// LogStart is the leader's log start: the follower drops what lies
	// below it, as the leader's retention did, or, when its log ends below
	// it, starts again empty there.
	LogStart uint64
	// Records are consecutive, from the first one's offset; none is a
	// probe that only asks for the follower's log end.
	Records []log.Record
}

// ReplicateResponse says the follower holds every record up to End,
// durably.
type ReplicateResponse struct {
	End uint64 `json:"end"`
}

// RecordsRequest reads a replica's log.
type RecordsRequest struct {
	Topic     string
	Partition int
	From      uint64
	MaxBytes  int
	// Committed reads only below the high watermark (a consumer's read);
	// otherwise up to the log end (a follower's recovery).
	Committed bool
}

// RecordsResponse is a read's records, and the log's bounds when read. A
// read from below LogStart that is not Committed gets no records: the
// reader (a follower) learns where the log starts now.
type RecordsResponse struct {
	Records       []log.Record
	LogStart      uint64
	LogEnd        uint64
	HighWatermark uint64
}

// OffsetForTimeRequest asks a partition's leader for the first offset
// whose record's timestamp (nanoseconds since the epoch) is at or after
// Timestamp (cluster.Cluster.OffsetForTime).
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

// ProduceRequest is a produce request forwarded to a partition's leader.
type ProduceRequest struct {
	Topic     string
	Partition int
	Payloads  [][]byte
}

// Placement is where the leader put one record.
type Placement struct {
	Offset    uint64 `json:"offset"`
	Timestamp int64  `json:"timestamp"`
}

// ProduceResponse places every payload, in order.
type ProduceResponse struct {
	Records []Placement `json:"records"`
	// Brokers are the replicas that hold the records.
	Brokers []int `json:"brokers"`
	Leader  int   `json:"leader"`
}

// ReplicaReport is one replica as its broker sees it.
type ReplicaReport struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// LogEnd is the replica's next offset; absent when the log cannot be
	// opened (Error says why).
	LogEnd *uint64 `json:"log_end,omitempty"`
	// SyncedEpoch is the leader epoch at which this replica last proved
	// itself a prefix of its leader's log (cut back and caught up): a
	// replica outside the active set is ready to rejoin when it equals the
	// partition's epoch and CaughtUp is set.
	SyncedEpoch uint64 `json:"synced_epoch"`
	CaughtUp    bool   `json:"caught_up"`
	Diverged    bool   `json:"diverged,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Heartbeat is a broker's periodic report to the Raft leader, whose
// controller decides failovers from the silences between them.
type Heartbeat struct {
	Node     int             `json:"node"`
	Replicas []ReplicaReport `json:"replicas"`
}

// The membership changes of MembershipRequest.
const (
	MembershipAdd    = "add"
	MembershipRemove = "remove"
)

// MembershipRequest adds or removes a voter of the metadata group.
type MembershipRequest struct {
	Op   string `json:"op"`
	ID   int    `json:"id"`
	Addr string `json:"addr,omitempty"`
}

// CatchUpResponse is a leader's answer to a controller's catch-up.
type CatchUpResponse struct {
	End    uint64 `json:"end"`
	Copied int    `json:"copied"`
}

// encodeFrames renders records in phase 1's frame format.
func encodeFrames(recs []log.Record) []byte {
	n := 0
	for _, r := range recs {
		n += log.FrameSize(len(r.Payload))
	}
	out := make([]byte, 0, n)
	for _, r := range recs {
		out = log.AppendFrame(out, r)
	}
	return out
}

// decodeFrames reads a body of frames with log.DecodeFrame; anything but
// whole frames is an error.
func decodeFrames(b []byte) ([]log.Record, error) {
	var recs []log.Record
	for len(b) > 0 {
		r, n, err := log.DecodeFrame(b)
		if err != nil {
			return nil, fmt.Errorf("replication: record %d: %w", len(recs), err)
		}
		recs = append(recs, r)
		b = b[n:]
	}
	return recs, nil
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
