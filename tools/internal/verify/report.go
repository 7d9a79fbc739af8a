package verify

import (
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// Status is the verdict on one item.
type Status string

// The statuses an item can have. Only StatusDamaged, StatusDiverged and
// StatusMissing are problems; a lagging follower is normal after a failed
// replication and is repaired by catch-up.
const (
	// StatusOK: the item is whole (and, for a replica, equal to its leader).
	StatusOK Status = "OK"
	// StatusLag: a follower replica is an exact prefix of its leader, Lag
	// records short.
	StatusLag Status = "LAG"
	// StatusDamaged: a log or metadata file is not what PyStream writes.
	StatusDamaged Status = "DAMAGED"
	// StatusDiverged: an active follower holds a record that differs from
	// its leader's, or records past the leader's end.
	StatusDiverged Status = "DIVERGED"
	// StatusMissing: a file that metadata promises does not exist.
	StatusMissing Status = "MISSING"
	// StatusInactive: a follower outside the active set differs from its
	// leader. After a failover the old leader keeps records that were never
	// acknowledged; recovery truncates them, so this is not a problem.
	StatusInactive Status = "INACTIVE"
)

// Problem reports whether s makes the verification fail.
func (s Status) Problem() bool {
	return s == StatusDamaged || s == StatusDiverged || s == StatusMissing
}

// Kind says what an item is.
type Kind string

// The kinds of item.
const (
	KindLog         Kind = "log"
	KindReplica     Kind = "replica"
	KindQuarantine  Kind = "quarantine"
	KindTopicMeta   Kind = topic.MetadataFile
	KindClusterMeta Kind = cluster.MetaFileName
	KindOffset      Kind = "offset"
	// KindEpochs is a replica's leader-epoch history, or one the server
	// set aside as unreadable.
	KindEpochs Kind = cluster.EpochsFileName
	// KindCommitJournal is a generation file of a broker's commit
	// journal (log/wal), or one its replay set aside.
	KindCommitJournal Kind = "commit journal"
)

// Item is one line of a report.
type Item struct {
	// Status is the verdict.
	Status Status `json:"status"`
	// Kind is what was checked.
	Kind Kind `json:"kind"`
	// Path is the file, as reached from the path given to Verify; a log
	// directory's ends in a path separator.
	Path string `json:"path"`
	// Segment is the segment file of a log directory where damage was
	// found, as reached from the path given to Verify; Pos is a byte
	// position in it.
	Segment string `json:"segment,omitempty"`
	// Pos is the byte position of the damage in a log file (in Segment
	// for a log directory), when known.
	Pos *int64 `json:"position,omitempty"`
	// Offset is the record offset the item is about, when there is one:
	// the damaged record, or the first offset where a replica diverges.
	Offset *uint64 `json:"offset,omitempty"`
	// Records is the number of whole records in a log.
	Records *uint64 `json:"records,omitempty"`
	// Lag is how many records a follower is behind its leader.
	Lag uint64 `json:"lag,omitempty"`
	// TornTail is true for log damage that `pystream log repair` can cut.
	TornTail bool `json:"torn_tail,omitempty"`
	// Detail says what was found, in words.
	Detail string `json:"detail,omitempty"`
}

// Report is the result of a verification, in the order items were checked.
type Report struct {
	Items []Item `json:"items"`
}

// Problems counts the items whose status is a problem.
func (r Report) Problems() int {
	n := 0
	for _, it := range r.Items {
		if it.Status.Problem() {
			n++
		}
	}
	return n
}

// Counts returns how many items have each status.
func (r Report) Counts() map[Status]int {
	c := make(map[Status]int)
	for _, it := range r.Items {
		c[it.Status]++
	}
	return c
}

func ptr[T any](v T) *T { return &v }
