package replication

import (
	"fmt"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
)

// Heartbeat is a broker's periodic report to the controller (the Raft
// leader), whose controller decides failovers from the silences between
// them: every replica the broker holds, as cluster.Cluster.Reports
// describes it.
type Heartbeat struct {
	Node     int                     `json:"node"`
	Replicas []cluster.ReplicaReport `json:"replicas"`
}

// Observation is what the controller knows of every broker, sent back in
// answer to each heartbeat: so that every process answers a partition's
// status as the controller knows it, with how old that knowledge is.
type Observation struct {
	// Controller is the broker whose process made it; At when.
	Controller int       `json:"controller"`
	At         time.Time `json:"at"`
	// Brokers are every registered broker, by id.
	Brokers []BrokerSeen `json:"brokers"`
}

// BrokerSeen is one broker as the controller saw it: whether its
// heartbeats arrive, when the last one did, and what it reported.
type BrokerSeen struct {
	ID        int                     `json:"id"`
	Available bool                    `json:"available"`
	LastSeen  time.Time               `json:"last_seen"`
	Replicas  []cluster.ReplicaReport `json:"replicas,omitempty"`
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
