package verify

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/pystream/pystream/log"
)

// Replica is one side of a comparison: the offset its log starts at and
// its records from there, in order. Retention deletes a log's oldest
// segments and a follower may be reset to its leader's log start, so two
// replicas of a partition may start at different offsets.
type Replica struct {
	Start   uint64
	Records iter.Seq[log.Record]
}

// Comparison is what comparing a follower replica with its leader found.
type Comparison struct {
	// LeaderStart and FollowerStart are the two log starts; LeaderEnd and
	// FollowerEnd the two log ends (the offset after the last record, the
	// start when there is none).
	LeaderStart, FollowerStart uint64
	LeaderEnd, FollowerEnd     uint64
	// Mismatch is true when a record both hold differs; MismatchOffset is
	// the first such offset and Field names what differs.
	Mismatch       bool
	MismatchOffset uint64
	Field          string
}

// Compare walks a leader's and a follower's records side by side over the
// offsets both hold (from the later of the two log starts) and finds the
// first shared record that differs in offset, timestamp or payload (equal
// offsets alone are not proof of equal data). Records below the other
// replica's start are not compared: one replica may have deleted them. It
// reads both sequences to their ends to learn the two log ends.
func Compare(leader, follower Replica) Comparison {
	c := Comparison{LeaderStart: leader.Start, FollowerStart: follower.Start, LeaderEnd: leader.Start, FollowerEnd: follower.Start}
	from := max(leader.Start, follower.Start)
	nextL, stopL := iter.Pull(leader.Records)
	defer stopL()
	nextF, stopF := iter.Pull(follower.Records)
	defer stopF()
	// shared returns the next record at or past from, moving end past
	// every record it passes.
	shared := func(next func() (log.Record, bool), end *uint64) (log.Record, bool) {
		for {
			r, ok := next()
			if !ok {
				return r, false
			}
			*end = max(*end, r.Offset+1)
			if r.Offset >= from {
				return r, true
			}
		}
	}
	for {
		l, okL := shared(nextL, &c.LeaderEnd)
		f, okF := shared(nextF, &c.FollowerEnd)
		if okL && okF && !c.Mismatch {
			if field := differs(l, f); field != "" {
				c.Mismatch, c.MismatchOffset, c.Field = true, l.Offset, field
			}
		}
		if !okL && !okF {
			return c
		}
	}
}

func differs(a, b log.Record) string {
	switch {
	case a.Offset != b.Offset:
		return "offset"
	case a.Timestamp != b.Timestamp:
		return "timestamp"
	case !bytes.Equal(a.Payload, b.Payload):
		return "payload"
	}
	return ""
}

// Judge turns a comparison into a verdict on a follower replica of the given
// leader. An active follower must be an exact prefix of its leader: a
// mismatch or records past the leader's end are divergence. A follower that
// is not active (a failed leader after failover) may legitimately hold
// records that were never acknowledged; those are reported as inactive, not
// as a problem. A prefix that is short is lag, never damage. Only the
// offsets both replicas hold were compared, so a log start that differs
// from the leader's (retention, a reset follower) is neither.
func Judge(c Comparison, leader int, active bool) (Status, uint64, string) {
	diverged := ""
	switch {
	case c.Mismatch:
		diverged = fmt.Sprintf("%s of offset %d differs from leader broker %d", c.Field, c.MismatchOffset, leader)
	case c.FollowerEnd > c.LeaderEnd:
		diverged = fmt.Sprintf("holds %d records past leader broker %d's end %d", c.FollowerEnd-c.LeaderEnd, leader, c.LeaderEnd)
	}
	switch {
	case diverged != "" && active:
		return StatusDiverged, 0, diverged
	case diverged != "":
		return StatusInactive, 0, diverged + "; not active, recovery will reconcile it"
	case c.FollowerEnd < c.LeaderEnd:
		lag := c.LeaderEnd - c.FollowerEnd
		return StatusLag, lag, fmt.Sprintf("%d records behind leader broker %d (end %d, leader's end %d)%s", lag, leader, c.FollowerEnd, c.LeaderEnd, inactiveNote(active))
	}
	return StatusOK, 0, fmt.Sprintf("in sync with leader broker %d (end %d)%s", leader, c.LeaderEnd, inactiveNote(active))
}

func inactiveNote(active bool) string {
	if active {
		return ""
	}
	return "; not active"
}
