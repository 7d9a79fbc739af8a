package group

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pystream/pystream/topic"
)

// This file is what a consumer group's coordinator keeps of it across
// restarts and coordinator moves: its leases. Membership itself stays
// soft (members join again); what must survive is which partitions a
// member of the coordinator before could still be reading, and until
// when, so that the next coordinator withholds those partitions and no
// other (docs/groups.md § Restarts and a new coordinator). The server
// keeps the encoding beside the group's committed offsets
// (ConsumerConfig.Save); KIP-848 keeps its target assignment the same
// way.

// leaseFormat is the version of EncodeLeases's form.
const leaseFormat = 1

// Leases is what a consumer group's coordinator keeps of it durably.
type Leases struct {
	// Epoch is the group epoch when they were written: a coordinator
	// that starts the group again counts on from it.
	Epoch int32
	// Members are the members with their leases, by id, ascending.
	Members []MemberLease
}

// MemberLease is one member's lease: until End, the member may be
// reading Partitions, and no other member may be given them.
type MemberLease struct {
	MemberID string
	// Epoch is the member epoch when the lease was written.
	Epoch int32
	// Partitions is what the member holds: assigned, or not released.
	Partitions []TopicPartitions
	// End is when the member's session ends at the latest: its deadline
	// (last heartbeat plus the session timeout) or later, never earlier.
	End time.Time
}

// leasesJSON and memberLeaseJSON are EncodeLeases's form.
type leasesJSON struct {
	Version int               `json:"version"`
	Epoch   int32             `json:"epoch"`
	Members []memberLeaseJSON `json:"members"`
}

type memberLeaseJSON struct {
	ID         string           `json:"id"`
	Epoch      int32            `json:"epoch"`
	End        time.Time        `json:"end"`
	Partitions []partitionsJSON `json:"partitions"`
}

type partitionsJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// EncodeLeases renders l as one JSON document, members and partitions in
// the order ParseLeases requires.
func EncodeLeases(l Leases) ([]byte, error) {
	out := leasesJSON{Version: leaseFormat, Epoch: l.Epoch, Members: []memberLeaseJSON{}}
	for _, m := range l.Members {
		ps := []partitionsJSON{}
		for _, tp := range setOf(m.Partitions).list() {
			ps = append(ps, partitionsJSON(tp))
		}
		out.Members = append(out.Members, memberLeaseJSON{ID: m.MemberID, Epoch: m.Epoch, End: m.End.UTC(), Partitions: ps})
	}
	slices.SortFunc(out.Members, func(a, b memberLeaseJSON) int { return strings.Compare(a.ID, b.ID) })
	data, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("group: encode leases: %w", err)
	}
	if _, err := ParseLeases(data); err != nil {
		return nil, fmt.Errorf("group: encode leases: %w", err)
	}
	return data, nil
}

// ParseLeases decodes EncodeLeases's form: JSON with its fields and no
// others, no trailing data, version 1, member ids and topics valid names,
// members ascending and unique, epochs not negative, partitions from 0,
// each topic once and its partitions ascending and unique. Anything else
// wraps ErrInvalidLeases.
func ParseLeases(data []byte) (Leases, error) {
	var in leasesJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return Leases{}, fmt.Errorf("%w: %w", ErrInvalidLeases, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Leases{}, fmt.Errorf("%w: trailing data after the document", ErrInvalidLeases)
	}
	if in.Version != leaseFormat {
		return Leases{}, fmt.Errorf("%w: version %d, want %d", ErrInvalidLeases, in.Version, leaseFormat)
	}
	if in.Epoch < 0 {
		return Leases{}, fmt.Errorf("%w: group epoch %d", ErrInvalidLeases, in.Epoch)
	}
	if len(in.Members) > MaxMembers {
		return Leases{}, fmt.Errorf("%w: %d members, at most %d", ErrInvalidLeases, len(in.Members), MaxMembers)
	}
	out := Leases{Epoch: in.Epoch}
	for i, m := range in.Members {
		if err := topic.ValidateName(m.ID); err != nil {
			return Leases{}, fmt.Errorf("%w: member %d: %w", ErrInvalidLeases, i, err)
		}
		if i > 0 && strings.Compare(in.Members[i-1].ID, m.ID) >= 0 {
			return Leases{}, fmt.Errorf("%w: member %q after %q: ids ascending, each once", ErrInvalidLeases, m.ID, in.Members[i-1].ID)
		}
		if m.Epoch < 0 {
			return Leases{}, fmt.Errorf("%w: member %q: epoch %d", ErrInvalidLeases, m.ID, m.Epoch)
		}
		lease := MemberLease{MemberID: m.ID, Epoch: m.Epoch, End: m.End}
		for j, tp := range m.Partitions {
			if err := topic.ValidateName(tp.Topic); err != nil {
				return Leases{}, fmt.Errorf("%w: member %q: topic %d: %w", ErrInvalidLeases, m.ID, j, err)
			}
			if j > 0 && strings.Compare(m.Partitions[j-1].Topic, tp.Topic) >= 0 {
				return Leases{}, fmt.Errorf("%w: member %q: topic %q after %q: topics ascending, each once", ErrInvalidLeases, m.ID, tp.Topic, m.Partitions[j-1].Topic)
			}
			if len(tp.Partitions) == 0 || len(tp.Partitions) > topic.MaxPartitionCount {
				return Leases{}, fmt.Errorf("%w: member %q: topic %q: %d partitions", ErrInvalidLeases, m.ID, tp.Topic, len(tp.Partitions))
			}
			for k, p := range tp.Partitions {
				if p < 0 || (k > 0 && p <= tp.Partitions[k-1]) {
					return Leases{}, fmt.Errorf("%w: member %q: topic %q: partition %d: partitions from 0, ascending, each once", ErrInvalidLeases, m.ID, tp.Topic, p)
				}
			}
			lease.Partitions = append(lease.Partitions, TopicPartitions(tp))
		}
		out.Members = append(out.Members, lease)
	}
	return out, nil
}
