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

// commonPrefix reads two logs side by side from offset 0 up to (not
// including) upto and returns the number of leading records they share. When
// they differ before upto, reason says how; otherwise reason is "".
func commonPrefix(a, b *segment.Log, upto uint64) (uint64, string, error) {
	for at := uint64(0); at < upto; {
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
