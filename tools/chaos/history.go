package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Outcome is what a write attempt's producer learned.
type Outcome string

const (
	// Acked: the cluster acknowledged the write at Partition/Offset.
	Acked Outcome = "acked"
	// Failed: the cluster answered that the write was not made.
	Failed Outcome = "failed"
	// Unknown: no answer (a timeout, a lost connection) or an answer that
	// does not say: the value may or may not be in the log.
	Unknown Outcome = "unknown"
)

// Write is one write attempt of one unique value.
type Write struct {
	Value string `json:"value"`
	// Producer names the producer ("http-1", "kafka-1").
	Producer string `json:"producer"`
	// Idempotent is true when the producer is idempotent (a Kafka client
	// with a producer id): the value must never be in the log twice,
	// whatever its outcome.
	Idempotent bool      `json:"idempotent,omitempty"`
	Partition  int       `json:"partition"`
	Offset     uint64    `json:"offset"`
	Outcome    Outcome   `json:"outcome"`
	Error      string    `json:"error,omitempty"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
}

// Read is one record a reader saw during the run.
type Read struct {
	// Via is the node the read was sent to.
	Via       int       `json:"via"`
	Partition int       `json:"partition"`
	Offset    uint64    `json:"offset"`
	Value     string    `json:"value"`
	At        time.Time `json:"at"`
}

// CommitKind tells a commit the group made from one it read back.
type CommitKind string

const (
	// CommitAcked: the group's member committed Offset and the cluster
	// acknowledged it.
	CommitAcked CommitKind = "acked"
	// CommitUnknown: a commit got no answer; it may have happened.
	CommitUnknown CommitKind = "unknown"
	// CommitObserved: the committed offset, read back from the cluster.
	CommitObserved CommitKind = "observed"
)

// Commit is one event of the group's committed offset of a partition,
// in the order the group's one goroutine made them.
type Commit struct {
	Group     string     `json:"group"`
	Partition int        `json:"partition"`
	Kind      CommitKind `json:"kind"`
	Offset    uint64     `json:"offset"`
	// MemberEpoch is the member's epoch the commit was made with.
	MemberEpoch int32 `json:"member_epoch,omitempty"`
	// HighWatermark is the partition's high watermark the member last saw
	// before the commit.
	HighWatermark uint64    `json:"high_watermark"`
	At            time.Time `json:"at"`
}

// Fault is one fault the run injected.
type Fault struct {
	Kind   string `json:"kind"`
	Victim int    `json:"victim"`
	// Role says why the victim was chosen: leader, controller or any.
	Role string `json:"role"`
	// Controller is true when the victim led the metadata group.
	Controller bool      `json:"controller,omitempty"`
	Injected   time.Time `json:"injected"`
	Healed     time.Time `json:"healed"`
	// Healthy is when the cluster was whole again after the heal (every
	// node ready, every replica active); zero when it was not within the
	// bound, which Unhealed then explains.
	Healthy  time.Time `json:"healthy"`
	Unhealed string    `json:"unhealed,omitempty"`
	// Failover is how long after injection the last partition the victim
	// led was failed over, or the controller moved (whichever is later);
	// zero when nothing had to move.
	Failover time.Duration `json:"failover_ns"`
	// Partitions lists the partitions the victim led at injection.
	Partitions []int `json:"partitions,omitempty"`
	// Note says what happened, for the evidence.
	Note string `json:"note,omitempty"`
}

// Entry is one record of a final log.
type Entry struct {
	Offset uint64 `json:"offset"`
	Value  string `json:"value"`
}

// FinalLog is one view of one partition after the run: read through a
// node's API, or a node's replica file.
type FinalLog struct {
	// Source names the view: "api node 2", "replica node 3".
	Source    string  `json:"source"`
	Partition int     `json:"partition"`
	Entries   []Entry `json:"entries"`
}

// History is everything a run recorded: the input of Check. It is safe
// for concurrent use through its Add methods; Check reads it after the
// run.
type History struct {
	Seed       uint64 `json:"seed"`
	Mode       string `json:"mode"`
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	// FailoverAfter is the cluster's PYSTREAM_FAILOVER_AFTER.
	FailoverAfter time.Duration `json:"failover_after_ns"`
	Start         time.Time     `json:"start"`
	End           time.Time     `json:"end"`

	// mu guards the slices below while the run appends to them.
	mu      sync.Mutex
	Writes  []Write  `json:"writes"`
	Reads   []Read   `json:"reads"`
	Commits []Commit `json:"commits"`
	Faults  []Fault  `json:"faults"`
	// Final holds the views of every partition after healing.
	Final []FinalLog `json:"final"`
	// FinalHighWatermarks is each partition's high watermark after
	// healing, by partition.
	FinalHighWatermarks []uint64 `json:"final_high_watermarks"`
	// Problems are failures of the harness or of the final checks that
	// are not about the history (a replica that log verify refuses,
	// replica files that differ): each is a violation.
	Problems []Problem `json:"problems,omitempty"`
}

// Problem is a failure found outside the history, with the time it
// belongs to (zero for the checks after the run).
type Problem struct {
	At     time.Time `json:"at"`
	Detail string    `json:"detail"`
}

// AddWrite records a write attempt.
func (h *History) AddWrite(w Write) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Writes = append(h.Writes, w)
}

// AddReads records records a reader saw.
func (h *History) AddReads(rs []Read) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Reads = append(h.Reads, rs...)
}

// AddCommit records a commit event.
func (h *History) AddCommit(c Commit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Commits = append(h.Commits, c)
}

// AddFault records a fault once it has healed.
func (h *History) AddFault(f Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Faults = append(h.Faults, f)
}

// AddProblem records a failure found outside the history, after the
// run.
func (h *History) AddProblem(format string, args ...any) {
	h.AddProblemAt(time.Time{}, format, args...)
}

// AddProblemAt records a failure found outside the history at a time of
// the run (a fault that could not be injected or healed).
func (h *History) AddProblemAt(at time.Time, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Problems = append(h.Problems, Problem{At: at, Detail: fmt.Sprintf(format, args...)})
}

// Save writes the history as JSON to path.
func (h *History) Save(path string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	data, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("chaos: encode history: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("chaos: save history: %w", err)
	}
	return nil
}

// LoadHistory reads a history Save wrote.
func LoadHistory(path string) (*History, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chaos: load history: %w", err)
	}
	h := &History{}
	if err := json.Unmarshal(data, h); err != nil {
		return nil, fmt.Errorf("chaos: decode history %s: %w", path, err)
	}
	return h, nil
}
