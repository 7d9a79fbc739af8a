package cluster

import (
	"bytes"
	"fmt"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// Mismatch describes the first difference between two runs of records.
type Mismatch struct {
	// Index is the position in both runs of the first record that differs
	// (equal to the shorter length when one run is a prefix of the other).
	Index int
	// Differs is false when one run is a prefix of the other (or both are
	// equal).
	Differs bool
	// Reason names the first field that differs: "offset", "timestamp" or
	// "payload".
	Reason string
}

// CompareRecords compares two runs of records position by position and
// reports where they first differ. Equal offsets alone are not proof of
// equal data: every shared record is compared on offset, timestamp and
// payload. Catch-up, failover and recovery all decide with this function.
func CompareRecords(a, b []log.Record) Mismatch {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		switch {
		case x.Offset != y.Offset:
			return Mismatch{Index: i, Differs: true, Reason: fmt.Sprintf("offset %d vs %d", x.Offset, y.Offset)}
		case x.Timestamp != y.Timestamp:
			return Mismatch{Index: i, Differs: true, Reason: fmt.Sprintf("timestamp %d vs %d", x.Timestamp, y.Timestamp)}
		case !bytes.Equal(x.Payload, y.Payload):
			return Mismatch{Index: i, Differs: true, Reason: "payload differs"}
		}
	}
	return Mismatch{Index: n}
}

// compareChunk is how many records the I/O helpers read per step.
const compareChunk = 512

// commonPrefix reads two logs side by side up to (not including) upto and
// returns the end of the leading run of records they share. Only the range
// both still hold is compared: from the later of their log starts, since
// what retention deleted from either can no longer be compared (and was
// below both high watermarks when it was deleted). When they differ before
// upto, reason says how; otherwise reason is "".
func commonPrefix(a, b *segment.Log, upto uint64) (uint64, string, error) {
	for at := max(a.LogStart(), b.LogStart()); at < upto; {
		n := int(min(uint64(compareChunk), upto-at))
		ra, err := a.Read(at, n)
		if err != nil {
			return 0, "", err
		}
		rb, err := b.Read(at, n)
		if err != nil {
			return 0, "", err
		}
		if len(ra) != n || len(rb) != n {
			return 0, "", fmt.Errorf("cluster: compare logs at offset %d: short read (%d and %d of %d records)", at, len(ra), len(rb), n)
		}
		if m := CompareRecords(ra, rb); m.Differs {
			return at + uint64(m.Index), m.Reason, nil
		}
		at += uint64(n)
	}
	return upto, "", nil
}

// alignStart gives a follower's log the leader's log start. A follower
// whose log ends below it holds nothing the leader still has: its log is
// reset to start, empty, at the leader's start (segment.Log.ResetTo), and
// reset reports the follower's old log end. A follower that starts earlier
// drops what lies below the leader's start (segment.Log.AdvanceStart), as
// the leader's retention did. The caller holds the partition's writes back.
func alignStart(follower, leader *segment.Log) (reset bool, oldEnd uint64, err error) {
	start := leader.LogStart()
	oldEnd = follower.NextOffset()
	switch {
	case oldEnd < start:
		if err := follower.ResetTo(start); err != nil {
			return false, oldEnd, fmt.Errorf("cluster: reset replica to the leader's log start %d: %w", start, err)
		}
		return true, oldEnd, nil
	case follower.LogStart() < start:
		if _, err := follower.AdvanceStart(start); err != nil {
			return false, oldEnd, fmt.Errorf("cluster: advance replica to the leader's log start %d: %w", start, err)
		}
	}
	return false, oldEnd, nil
}

// copyRecords appends src's records [from, to) to dst in chunks; dst's next
// offset must be from. It returns how many records it copied.
func copyRecords(dst, src *segment.Log, from, to uint64) (int, error) {
	copied := 0
	for at := from; at < to; {
		recs, err := src.Read(at, int(min(uint64(compareChunk), to-at)))
		if err != nil {
			return copied, err
		}
		if len(recs) == 0 {
			return copied, fmt.Errorf("cluster: copy records: source ended at offset %d, before %d", at, to)
		}
		if err := dst.AppendRecords(recs); err != nil {
			return copied, err
		}
		copied += len(recs)
		at += uint64(len(recs))
	}
	return copied, nil
}
