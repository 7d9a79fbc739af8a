package cluster

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
)

// QuarantinePath names the file that keeps the records a recovery cut from
// the replica log in dir: offsets from up to, not including, to, cut at
// time at. It lies among the log's segments:
// <dir>/quarantine-<from>-<to>-<unix nanoseconds>.bin, in the log's frame
// format with offsets from from (read it with log.ScanFileFrom, or
// `pystream log dump`). PyStream never deletes it; the operator does.
func QuarantinePath(dir string, from, to uint64, at time.Time) string {
	return filepath.Join(dir, fmt.Sprintf("quarantine-%d-%d-%d.bin", from, to, at.UnixNano()))
}

var quarantineName = regexp.MustCompile(`^quarantine-(\d+)-(\d+)-(\d+)\.bin$`)

// ParseQuarantineName reads back what QuarantinePath put in a file's base
// name. ok is false for any other name, or numbers out of range or order.
func ParseQuarantineName(name string) (from, to uint64, at time.Time, ok bool) {
	m := quarantineName.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, time.Time{}, false
	}
	from, err1 := strconv.ParseUint(m[1], 10, 64)
	to, err2 := strconv.ParseUint(m[2], 10, 64)
	ns, err3 := strconv.ParseInt(m[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || from >= to {
		return 0, 0, time.Time{}, false
	}
	return from, to, time.Unix(0, ns), true
}

// Replica returns the broker's log of one partition, opened on first use;
// with create it is created when missing. The cluster-mode broker process
// (server/clusternode) holds its replicas through it; an in-process
// Cluster keeps that to itself.
func (b *Broker) Replica(topicName string, partition int, create bool) (*segment.Log, error) {
	return b.replica(topicName, partition, create)
}

// CutReplica keeps the records [to, end) of the broker's replica in a new
// quarantine file beside its log (QuarantinePath, stamped at) and then
// truncates the log to to: what a recovery cuts is never destroyed. It
// returns the quarantine file, "" when there was nothing to cut. The
// caller holds the replica's writes back.
func (b *Broker) CutReplica(topicName string, partition int, to uint64, at time.Time) (string, error) {
	l, err := b.replica(topicName, partition, false)
	if err != nil {
		return "", err
	}
	end := l.NextOffset()
	if to >= end {
		return "", nil
	}
	path := QuarantinePath(l.Dir(), to, end, at)
	if err := quarantineRecords(b.opts.FS, l, path, to, end); err != nil {
		return "", fmt.Errorf("cluster: broker %d: cut %s/%d: %w", b.id, topicName, partition, err)
	}
	if err := b.truncateReplica(topicName, partition, to); err != nil {
		return path, fmt.Errorf("cluster: broker %d: cut %s/%d: %w", b.id, topicName, partition, err)
	}
	return path, nil
}

// quarantineRecords copies the records [from, to) of l, durably, into a
// new file at path on fsys: written to a temp file, fsync-ed, renamed,
// directory fsync-ed.
func quarantineRecords(fsys durable.FS, l *segment.Log, path string, from, to uint64) error {
	var frames []byte
	for at := from; at < to; {
		recs, err := l.Read(at, int(min(uint64(compareChunk), to-at)))
		if err != nil {
			return fmt.Errorf("quarantine offsets %d..%d: %w", from, to-1, err)
		}
		if len(recs) == 0 {
			return fmt.Errorf("quarantine offsets %d..%d: the log ends at %d: %w", from, to-1, at, ErrReplicaDivergence)
		}
		for _, r := range recs {
			frames = log.AppendFrame(frames, r)
		}
		at += uint64(len(recs))
	}
	if err := durable.WriteFile(fsys, path, frames); err != nil {
		return fmt.Errorf("quarantine offsets %d..%d: %w", from, to-1, err)
	}
	return nil
}

// now is the cluster's clock: the brokers' (BrokerOptions.Now).
func (c *Cluster) now() time.Time { return c.opts.Broker.Now() }
