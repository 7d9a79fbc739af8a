package cluster

import (
	"bytes"
	"context"
	"fmt"
	"math"

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
// equal data: every record compared is compared on offset, timestamp and
// payload. Where two replicas' leader-epoch histories cannot prove what
// they share (commonPrefix), this function decides; it also checks the
// last chunk of what they do prove.
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

// commonPrefixLogs reads two logs side by side over [from, upto) and
// returns the end of the leading run of records they share there. When
// they differ before upto, reason says how; otherwise reason is "".
func commonPrefixLogs(a, b *segment.Log, from, upto uint64) (uint64, string, error) {
	for at := from; at < upto; {
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

// digestWindow is how many chunks of compareChunk records one digest
// request covers.
const digestWindow = 256

// commonPrefix compares broker a's replica of p with broker b's up to
// (not including) upto and returns the end of the leading run of records
// they share, from the later of their log starts (what retention deleted
// from either can no longer be compared, and was below both high
// watermarks when it was deleted). When they differ before upto, reason
// says how. Catch-up, recovery, failover and a leader move all decide
// with it.
//
// It reads the two replicas' leader-epoch histories (epochs.go), not
// their logs: where both hold records of the same run they hold the same
// records, and where their runs differ their records do from the first
// offset on. Only what a history cannot tell — records in an unknown run,
// written before histories were kept — is compared record by record
// (compareRange). Then, as a check of the histories themselves, the last
// chunk of records before the answer is compared too; should it differ,
// the histories are wrong, which is logged, and the whole range is
// compared record by record instead.
func (c *Cluster) commonPrefix(ctx context.Context, p *partition, a, b int, upto uint64) (uint64, string, error) {
	var views [2]RecordsResponse
	for i, id := range []int{a, b} {
		v, err := c.transport.Records(ctx, id, RecordsRequest{Topic: p.topic, Partition: p.index, Runs: true})
		if err != nil {
			return 0, "", err
		}
		views[i] = v
	}
	from := max(views[0].LogStart, views[1].LogStart)
	if upto <= from {
		return upto, "", nil
	}
	common, reason, err := c.prefixByRuns(ctx, p, a, b, views[0].Runs, views[1].Runs, from, upto)
	if err != nil || common == from {
		return common, reason, err
	}
	at, why, err := c.compareRange(ctx, p, a, b, max(from, common-min(common, compareChunk)), common)
	if err != nil || at == common {
		return common, reason, err
	}
	c.logf("cluster: %s: the leader-epoch histories of brokers %d and %d say they share offsets up to %d, but their records differ at %d (%s); comparing them record by record",
		p, a, b, common, at, why)
	return c.compareRange(ctx, p, a, b, from, upto)
}

// prefixByRuns is commonPrefix's reading of two histories, ra of broker
// a's replica and rb of b's, over [from, upto).
func (c *Cluster) prefixByRuns(ctx context.Context, p *partition, a, b int, ra, rb []EpochRun, from, upto uint64) (uint64, string, error) {
	for _, s := range runSpans(ra, rb, from, upto) {
		switch {
		case s.a.Known() && s.b.Known() && sameRun(s.a, s.b):
			continue
		case s.a.Known() && s.b.Known():
			return s.from, fmt.Sprintf("offset %d was written in %s on broker %d, in %s on broker %d", s.from, s.a.describe(), a, s.b.describe(), b), nil
		}
		at, why, err := c.compareRange(ctx, p, a, b, s.from, s.to)
		if err != nil || at < s.to {
			return at, why, err
		}
	}
	return upto, "", nil
}

// compareRange compares broker a's replica of p with broker b's over
// [from, upto), record by record, and returns the end of the leading run
// of records they share there; reason says how they differ. Two replicas
// this process hosts are read side by side; when either runs in another
// process, each broker summarises its own records chunk by chunk
// (Transport.Digests), and only the first chunk that differs crosses the
// network record by record.
func (c *Cluster) compareRange(ctx context.Context, p *partition, a, b int, from, upto uint64) (uint64, string, error) {
	if la, lb := c.localLog(p, a), c.localLog(p, b); la != nil && lb != nil {
		return commonPrefixLogs(la, lb, from, upto)
	}
	for at := from; at < upto; {
		window := min(upto-at, uint64(digestWindow*compareChunk))
		req := DigestsRequest{Topic: p.topic, Partition: p.index, From: at, To: at + window, Chunk: compareChunk}
		da, err := c.transport.Digests(ctx, a, req)
		if err != nil {
			return 0, "", err
		}
		db, err := c.transport.Digests(ctx, b, req)
		if err != nil {
			return 0, "", err
		}
		chunks := int((window + compareChunk - 1) / compareChunk)
		if len(da.Digests) != chunks || len(db.Digests) != chunks {
			return 0, "", fmt.Errorf("cluster: compare replicas of %s at offset %d: short read (%d and %d of %d chunks)", p, at, len(da.Digests), len(db.Digests), chunks)
		}
		for i := range chunks {
			if da.Digests[i] == db.Digests[i] {
				continue
			}
			start := at + uint64(i)*compareChunk
			n := int(min(uint64(compareChunk), upto-start))
			rr := RecordsRequest{Topic: p.topic, Partition: p.index, From: start, MaxBytes: math.MaxInt32, MaxRecords: n}
			ra, err := c.transport.Records(ctx, a, rr)
			if err != nil {
				return 0, "", err
			}
			rb, err := c.transport.Records(ctx, b, rr)
			if err != nil {
				return 0, "", err
			}
			if len(ra.Records) != n || len(rb.Records) != n {
				return 0, "", fmt.Errorf("cluster: compare replicas of %s at offset %d: short read (%d and %d of %d records)", p, start, len(ra.Records), len(rb.Records), n)
			}
			if m := CompareRecords(ra.Records, rb.Records); m.Differs {
				return start + uint64(m.Index), m.Reason, nil
			}
			return 0, "", fmt.Errorf("cluster: compare replicas of %s at offset %d: the digests differ, the records do not", p, start)
		}
		at += window
	}
	return upto, "", nil
}

// localLog is broker id's log of p when this process hosts the broker and
// the log can be opened; nil otherwise.
func (c *Cluster) localLog(p *partition, id int) *segment.Log {
	if !c.hosts(id) {
		return nil
	}
	m, err := c.hosted(id)
	if err != nil {
		return nil
	}
	l, err := m.b.replica(p.topic, p.index, false)
	if err != nil {
		return nil
	}
	return l
}
