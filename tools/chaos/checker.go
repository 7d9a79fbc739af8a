package chaos

import (
	"fmt"
	"slices"
	"time"
)

// The kinds of violation Check reports.
const (
	// VLostAck: an acknowledged value is in no final log.
	VLostAck = "lost-ack"
	// VMovedAck: an acknowledged value is in the log, not at the offset
	// its acknowledgement named.
	VMovedAck = "moved-ack"
	// VDuplicateAck: a value its producer sent once is in the log twice,
	// or an idempotent producer's value is, whatever its outcome.
	VDuplicateAck = "duplicate-ack"
	// VPhantom: a value in the log that no producer sent.
	VPhantom = "phantom"
	// VGap: a final log's offsets are not 0, 1, 2, ... (or it ends before
	// the high watermark).
	VGap = "gap"
	// VDivergent: two views of one partition (nodes, replica files)
	// differ.
	VDivergent = "divergent"
	// VRewritten: a record read during the run is not in the final log as
	// it was read.
	VRewritten = "rewritten"
	// VCommitBackwards: the group's committed offset went backwards.
	VCommitBackwards = "commit-backwards"
	// VCommitAboveHW: a committed offset above the partition's high
	// watermark.
	VCommitAboveHW = "commit-above-hw"
	// VProblem: a failure found outside the history (log verify, replica
	// files, a cluster that did not heal).
	VProblem = "problem"
)

// Violation is one broken guarantee, with what a reader of the evidence
// needs to find it.
type Violation struct {
	Kind      string    `json:"kind"`
	Partition int       `json:"partition"`
	Offset    uint64    `json:"offset"`
	Value     string    `json:"value,omitempty"`
	At        time.Time `json:"at"`
	Detail    string    `json:"detail"`
}

// String is the violation on one line.
func (v Violation) String() string {
	return fmt.Sprintf("%s: partition %d offset %d value %q: %s", v.Kind, v.Partition, v.Offset, v.Value, v.Detail)
}

// Report is Check's verdict.
type Report struct {
	Violations []Violation `json:"violations"`
	// Duplicates counts the extra copies of values that were not
	// acknowledged, or whose client may have sent them twice: expected
	// until idempotent producers exist, so they are counted, not failed.
	Duplicates int `json:"duplicates"`
	// Acked, Failed and Unknown count the write attempts by outcome;
	// UnknownPresent the unknown ones found in the log.
	Acked          int `json:"acked"`
	Failed         int `json:"failed"`
	Unknown        int `json:"unknown"`
	UnknownPresent int `json:"unknown_present"`
	// Records is the number of records in the final logs (the reference
	// view of each partition).
	Records int `json:"records"`
}

// Kinds counts the violations by kind.
func (r *Report) Kinds() map[string]int {
	out := map[string]int{}
	for _, v := range r.Violations {
		out[v.Kind]++
	}
	return out
}

// place is where a value sits in a final log.
type place struct {
	partition int
	offset    uint64
}

// Check checks a run's history against PyStream's guarantees
// (docs/chaos.md § The checks) and lists every violation. It is a pure
// function of h.
func Check(h *History) *Report {
	r := &Report{}
	add := func(v Violation) { r.Violations = append(r.Violations, v) }

	// The reference view of each partition is its first final view; every
	// other view must equal it.
	ref := map[int][]Entry{}
	for _, f := range h.Final {
		checkDense(f, h.FinalHighWatermarks, add)
		first, ok := ref[f.Partition]
		if !ok {
			ref[f.Partition] = f.Entries
			continue
		}
		if i, same := firstDifference(first, f.Entries); !same {
			v := Violation{Kind: VDivergent, Partition: f.Partition, Offset: uint64(i),
				Detail: fmt.Sprintf("%s differs from the first view at entry %d (%d entries against %d)", f.Source, i, len(f.Entries), len(first))}
			if i < len(f.Entries) {
				v.Value = f.Entries[i].Value
			}
			add(v)
		}
	}

	// Where each value is, in the reference views.
	where := map[string][]place{}
	for p, entries := range ref {
		r.Records += len(entries)
		for _, e := range entries {
			where[e.Value] = append(where[e.Value], place{p, e.Offset})
		}
	}
	at := func(p int, o uint64) (string, bool) {
		entries := ref[p]
		i, found := slices.BinarySearchFunc(entries, o, func(e Entry, o uint64) int { return cmpU64(e.Offset, o) })
		if !found {
			return "", false
		}
		return entries[i].Value, true
	}

	sent := map[string]bool{}
	for _, w := range h.Writes {
		sent[w.Value] = true
		places := where[w.Value]
		switch w.Outcome {
		case Acked:
			r.Acked++
			if got, ok := at(w.Partition, w.Offset); !ok || got != w.Value {
				kind, detail := VLostAck, "acknowledged by "+w.Producer+", in no final log"
				if len(places) > 0 {
					kind, detail = VMovedAck, fmt.Sprintf("acknowledged by %s, found at partition %d offset %d", w.Producer, places[0].partition, places[0].offset)
				}
				add(Violation{Kind: kind, Partition: w.Partition, Offset: w.Offset, Value: w.Value, At: w.End, Detail: detail})
			}
		case Failed:
			r.Failed++
		default:
			r.Unknown++
			if len(places) > 0 {
				r.UnknownPresent++
			}
		}
		if len(places) > 1 {
			switch {
			case w.Idempotent:
				add(Violation{Kind: VDuplicateAck, Partition: places[0].partition, Offset: places[0].offset, Value: w.Value, At: w.End,
					Detail: fmt.Sprintf("written by %s, an idempotent producer (%s), in the log %d times", w.Producer, w.Outcome, len(places))})
			case w.Outcome == Acked:
				add(Violation{Kind: VDuplicateAck, Partition: w.Partition, Offset: w.Offset, Value: w.Value, At: w.End,
					Detail: fmt.Sprintf("sent once by %s, in the log %d times", w.Producer, len(places))})
			default:
				r.Duplicates += len(places) - 1
			}
		}
	}
	for p, entries := range ref {
		for _, e := range entries {
			if !sent[e.Value] {
				add(Violation{Kind: VPhantom, Partition: p, Offset: e.Offset, Value: e.Value, Detail: "in the log, never sent"})
			}
		}
	}

	for _, rd := range h.Reads {
		got, ok := at(rd.Partition, rd.Offset)
		if !ok || got != rd.Value {
			detail := fmt.Sprintf("read through node %d, final log has %q", rd.Via, got)
			if !ok {
				detail = fmt.Sprintf("read through node %d, the final log ends before it", rd.Via)
			}
			add(Violation{Kind: VRewritten, Partition: rd.Partition, Offset: rd.Offset, Value: rd.Value, At: rd.At, Detail: detail})
		}
	}

	checkCommits(h, add)

	for _, p := range h.Problems {
		add(Violation{Kind: VProblem, Partition: -1, At: p.At, Detail: p.Detail})
	}
	return r
}

// checkDense reports a view whose offsets are not 0, 1, 2, ..., or an API
// view that ends before the partition's final high watermark.
func checkDense(f FinalLog, hws []uint64, add func(Violation)) {
	for i, e := range f.Entries {
		if e.Offset != uint64(i) {
			add(Violation{Kind: VGap, Partition: f.Partition, Offset: uint64(i), Value: e.Value,
				Detail: fmt.Sprintf("%s: entry %d has offset %d", f.Source, i, e.Offset)})
			return
		}
	}
	if f.Partition < len(hws) && uint64(len(f.Entries)) < hws[f.Partition] {
		add(Violation{Kind: VGap, Partition: f.Partition, Offset: uint64(len(f.Entries)),
			Detail: fmt.Sprintf("%s: ends at %d, below the high watermark %d", f.Source, len(f.Entries), hws[f.Partition])})
	}
}

// firstDifference is the first index where a and b differ, and whether
// they are equal.
func firstDifference(a, b []Entry) (int, bool) {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i, false
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b)), false
	}
	return 0, true
}

// checkCommits checks the group's commits of each partition, in the order
// its goroutine made them: a committed offset, once acknowledged or read
// back, is never seen lower later (the member is fenced and joins again
// through rebalances, and starts from what it reads back, so no
// generation may take the offset back), and none is above the partition's
// final high watermark. An unknown commit may or may not have happened,
// so it raises nothing.
func checkCommits(h *History, add func(Violation)) {
	type key struct {
		group     string
		partition int
	}
	floor := map[key]uint64{}
	for _, c := range h.Commits {
		k := key{c.Group, c.Partition}
		if c.Kind == CommitUnknown {
			continue
		}
		if c.Offset < floor[k] {
			add(Violation{Kind: VCommitBackwards, Partition: c.Partition, Offset: c.Offset, At: c.At,
				Detail: fmt.Sprintf("group %s: %s commit %d after %d", c.Group, c.Kind, c.Offset, floor[k])})
		}
		floor[k] = max(floor[k], c.Offset)
		if c.Partition < len(h.FinalHighWatermarks) && c.Offset > h.FinalHighWatermarks[c.Partition] {
			add(Violation{Kind: VCommitAboveHW, Partition: c.Partition, Offset: c.Offset, At: c.At,
				Detail: fmt.Sprintf("group %s: %s commit %d above the final high watermark %d", c.Group, c.Kind, c.Offset, h.FinalHighWatermarks[c.Partition])})
		}
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
