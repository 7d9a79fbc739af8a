package verify

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/pystream/pystream/log"
)

// Comparison is what comparing a follower replica with its leader found.
type Comparison struct {
	// LeaderEnd and FollowerEnd are the two log ends (record counts).
	LeaderEnd, FollowerEnd uint64
	// Mismatch is true when a record both hold differs; MismatchOffset is
	// the first such offset and Field names what differs.
	Mismatch       bool
	MismatchOffset uint64
	Field          string
}

// Compare walks a leader's and a follower's records side by side and finds
// the first shared record that differs in offset, timestamp or payload
// (equal offsets alone are not proof of equal data). It reads both
// sequences to their ends to learn the two log ends.
func Compare(leader, follower iter.Seq[log.Record]) Comparison {
	nextL, stopL := iter.Pull(leader)
	defer stopL()
	nextF, stopF := iter.Pull(follower)
	defer stopF()
	var c Comparison
	for {
		l, okL := nextL()
		f, okF := nextF()
		if okL {
			c.LeaderEnd++
		}
		if okF {
			c.FollowerEnd++
		}
		if okL && okF && !c.Mismatch {
			if field := differs(l, f); field != "" {
				c.Mismatch, c.MismatchOffset, c.Field = true, c.LeaderEnd-1, field
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
// as a problem. A prefix that is short is lag, never damage.
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
		return StatusLag, lag, fmt.Sprintf("%d records behind leader broker %d (%d of %d)%s", lag, leader, c.FollowerEnd, c.LeaderEnd, inactiveNote(active))
	}
	return StatusOK, 0, fmt.Sprintf("in sync with leader broker %d (%d records)%s", leader, c.LeaderEnd, inactiveNote(active))
}

func inactiveNote(active bool) string {
	if active {
		return ""
	}
	return "; not active"
}
