package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
)

// This file keeps a leader's producer table (producers.go) on disk, so
// that a broker that restarts, or leads a partition again, reads only
// the log past its last snapshot instead of the whole log (Kafka's
// .snapshot files). A snapshot is written when the leader's log has
// rolled to a new segment since the last one: at most one per segment.
//
// A snapshot is a cache of what the log says. It names the offset it
// describes the log up to and the digest of the record just before it;
// a rebuild uses the newest snapshot whose record is still in the log,
// unchanged (a log cut back and written again has other records there),
// and reads the log from its offset. One that does not fit, or does not
// parse, is passed over for an older one or the log start, and a broken
// one is reported. Snapshots below the log start are removed, and the
// newest ProducerSnapshotsKept are kept, so that retention, which drops
// whole segments, never takes a live producer's state with them.

// ProducerSnapshotSuffix ends the name of a producer snapshot: the offset
// it describes the log up to, in 20 digits, then the suffix.
const ProducerSnapshotSuffix = ".producers"

// ProducerSnapshotsKept is how many snapshots a replica keeps.
const ProducerSnapshotsKept = 2

// maxProducerSnapshotSize bounds what a snapshot read loads.
const maxProducerSnapshotSize = 256 << 20

// producerSnapshotMagic starts every snapshot; the CRC-32C (Castagnoli)
// of everything after it follows, big-endian, then the body (version 1):
//
//	version        1 byte   1
//	offset         8 bytes  the log end the snapshot describes
//	last          32 bytes  the digest (DigestRecords) of the record at offset-1
//	producers      4 bytes  their count, then each, ascending by id:
//	  id             8 bytes
//	  epoch          2 bytes
//	  last write     8 bytes  append time (ns) of its last record
//	  open           1 byte   1 while a transaction is open, else 0
//	  txn first      8 bytes  the open transaction's first offset
//	  marker version 8 bytes  the highest version of its markers applied
//	  marker offset  8 bytes  where that marker is
//	  runs           1 byte   their count (at most 5), then each:
//	    first seq      4 bytes
//	    count          8 bytes
//	    first offset   8 bytes
//	    timestamp      8 bytes
//	ended          4 bytes  their count, then each, in marker order:
//	  producer id    8 bytes
//	  first          8 bytes
//	  marker         8 bytes
//	  aborted        1 byte   1 or 0
//
// Every integer is big-endian. Binary, because a start reads one per
// partition led: a thousand producers parse in microseconds.
const producerSnapshotMagic = "PSPR"

var snapshotCRC = crc32.MakeTable(crc32.Castagnoli)

// ProducerSnapshotFileName is the name of the snapshot at offset.
func ProducerSnapshotFileName(offset uint64) string {
	return fmt.Sprintf("%020d%s", offset, ProducerSnapshotSuffix)
}

// ParseProducerSnapshotFileName returns the offset a snapshot's name
// holds.
func ParseProducerSnapshotFileName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, ProducerSnapshotSuffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	off, err := strconv.ParseUint(digits, 10, 64)
	return off, err == nil
}

// ProducerSnapshotError is a snapshot that cannot be used: unreadable or
// malformed. The rebuild passes over it and says so.
type ProducerSnapshotError struct {
	Path   string
	Reason string
	Err    error
}

func (e *ProducerSnapshotError) Error() string {
	s := fmt.Sprintf("cluster: producer snapshot %s: %s", e.Path, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ProducerSnapshotError) Unwrap() error { return e.Err }

// encodeProducerSnapshot is the snapshot file of table t, whose last
// record is last; it leaves out producers silent since before
// expiredBefore, with no transaction open.
func encodeProducerSnapshot(t *producerTable, last log.Record, expiredBefore int64) []byte {
	ids := make([]int64, 0, len(t.producers))
	for id, e := range t.producers {
		if e.lastWrite >= expiredBefore || e.open {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	b := make([]byte, 0, 64+len(ids)*(43+producerRunsKept*28)+len(t.ended)*25)
	b = append(b, producerSnapshotMagic...)
	b = append(b, 0, 0, 0, 0) // the checksum, below
	b = append(b, 1)
	b = binary.BigEndian.AppendUint64(b, t.end)
	d := DigestRecords([]log.Record{last})
	b = append(b, d[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		e := t.producers[id]
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint16(b, uint16(e.epoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.lastWrite))
		b = append(b, boolByte(e.open))
		b = binary.BigEndian.AppendUint64(b, e.txnFirst)
		b = binary.BigEndian.AppendUint64(b, e.markerVersion)
		b = binary.BigEndian.AppendUint64(b, e.markerOffset)
		b = append(b, byte(len(e.runs)))
		for _, r := range e.runs {
			b = binary.BigEndian.AppendUint32(b, uint32(r.firstSeq))
			b = binary.BigEndian.AppendUint64(b, uint64(r.count))
			b = binary.BigEndian.AppendUint64(b, r.firstOffset)
			b = binary.BigEndian.AppendUint64(b, uint64(r.timestamp))
		}
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(t.ended)))
	for _, x := range t.ended {
		b = binary.BigEndian.AppendUint64(b, uint64(x.producerID))
		b = binary.BigEndian.AppendUint64(b, x.first)
		b = binary.BigEndian.AppendUint64(b, x.marker)
		b = append(b, boolByte(x.aborted))
	}
	h := len(producerSnapshotMagic)
	binary.BigEndian.PutUint32(b[h:], crc32.Checksum(b[h+4:], snapshotCRC))
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// snapshotReader reads a snapshot's fields; the first field that does
// not fit stops it, with its name in err.
type snapshotReader struct {
	b   []byte
	err error
}

func (r *snapshotReader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("truncated in %s", what)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *snapshotReader) u8(what string) byte {
	if v := r.take(1, what); v != nil {
		return v[0]
	}
	return 0
}

func (r *snapshotReader) u16(what string) uint16 {
	if v := r.take(2, what); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (r *snapshotReader) u32(what string) uint32 {
	if v := r.take(4, what); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *snapshotReader) u64(what string) uint64 {
	if v := r.take(8, what); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func (r *snapshotReader) flag(what string) bool {
	switch v := r.u8(what); {
	case r.err != nil:
	case v > 1:
		r.err = fmt.Errorf("%s: %d is neither 0 nor 1", what, v)
	default:
		return v == 1
	}
	return false
}

// parseProducerSnapshot is the one decoder of a snapshot file: a table
// (for no log yet) and the digest of its last record, or an error saying
// what is wrong.
func parseProducerSnapshot(data []byte) (*producerTable, Digest, error) {
	h := len(producerSnapshotMagic)
	if len(data) < h+4 || string(data[:h]) != producerSnapshotMagic {
		return nil, Digest{}, errors.New("no snapshot magic")
	}
	if crc32.Checksum(data[h+4:], snapshotCRC) != binary.BigEndian.Uint32(data[h:]) {
		return nil, Digest{}, errors.New("checksum mismatch")
	}
	r := &snapshotReader{b: data[h+4:]}
	if v := r.u8("version"); r.err == nil && v != 1 {
		return nil, Digest{}, fmt.Errorf("unknown version %d", v)
	}
	end := r.u64("offset")
	var last Digest
	copy(last[:], r.take(len(last), "last record digest"))
	if r.err == nil && end == 0 {
		return nil, Digest{}, errors.New("offset 0: a snapshot describes at least one record")
	}
	t := &producerTable{end: end, producers: map[int64]*producerEntry{}}
	n := r.u32("producer count")
	prev := int64(-1)
	for i := uint32(0); i < n && r.err == nil; i++ {
		id := int64(r.u64("producer id"))
		e := &producerEntry{epoch: int16(r.u16("epoch")), lastWrite: int64(r.u64("last write")),
			open: r.flag("open"), txnFirst: r.u64("transaction's first offset"), markerVersion: r.u64("marker version"), markerOffset: r.u64("marker offset")}
		runs := int(r.u8("run count"))
		for range min(runs, producerRunsKept+1) {
			e.runs = append(e.runs, producerRun{firstSeq: int32(r.u32("first sequence")), count: int64(r.u64("run count")),
				firstOffset: r.u64("run offset"), timestamp: int64(r.u64("run timestamp"))})
		}
		if r.err != nil {
			break
		}
		switch {
		case id <= prev:
			return nil, Digest{}, fmt.Errorf("producer %d: not ascending after %d", id, prev)
		case e.epoch < 0 || runs > producerRunsKept:
			return nil, Digest{}, fmt.Errorf("producer %d: invalid epoch or runs", id)
		case e.open && e.txnFirst >= end:
			return nil, Digest{}, fmt.Errorf("producer %d: open transaction at %d, past the snapshot", id, e.txnFirst)
		case e.markerOffset >= end:
			return nil, Digest{}, fmt.Errorf("producer %d: marker at %d, past the snapshot", id, e.markerOffset)
		}
		for _, run := range e.runs {
			if run.firstSeq < 0 || run.count < 1 || run.firstOffset >= end || uint64(run.count) > end-run.firstOffset {
				return nil, Digest{}, fmt.Errorf("producer %d: invalid run", id)
			}
		}
		prev = id
		t.producers[id] = e
	}
	m := r.u32("ended count")
	for i := uint32(0); i < m && r.err == nil; i++ {
		x := endedTxn{producerID: int64(r.u64("ended producer")), first: r.u64("ended first"), marker: r.u64("ended marker"), aborted: r.flag("aborted")}
		if r.err == nil && (x.producerID < 0 || x.first > x.marker || x.marker >= end) {
			return nil, Digest{}, fmt.Errorf("ended transaction of producer %d: invalid offsets", x.producerID)
		}
		t.ended = append(t.ended, x)
	}
	if r.err != nil {
		return nil, Digest{}, r.err
	}
	if len(r.b) > 0 {
		return nil, Digest{}, fmt.Errorf("%d bytes after the body", len(r.b))
	}
	return t, last, nil
}

// producerSnapshots lists the snapshots in dir, newest first.
func producerSnapshots(fsys durable.FS, dir string) ([]uint64, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var offs []uint64
	for _, e := range entries {
		if off, ok := ParseProducerSnapshotFileName(e.Name()); ok {
			offs = append(offs, off)
		}
	}
	slices.Sort(offs)
	slices.Reverse(offs)
	return offs, nil
}

// loadProducerSnapshot returns the newest snapshot in ll's directory that
// still describes ll — its offset within the log, past the log start, and
// its last record unchanged — or nil. Each one passed over because it is
// broken is reported through logf.
func loadProducerSnapshot(fsys durable.FS, ll *segment.Log, logf func(string, ...any)) *producerTable {
	offs, err := producerSnapshots(fsys, ll.Dir())
	if err != nil {
		logf("cluster: list producer snapshots in %s: %v", ll.Dir(), err)
		return nil
	}
	end, start := ll.NextOffset(), ll.LogStart()
	for _, off := range offs {
		if off > end || off <= start {
			continue
		}
		path := filepath.Join(ll.Dir(), ProducerSnapshotFileName(off))
		data, err := durable.ReadSmallFile(fsys, path, maxProducerSnapshotSize)
		if err != nil {
			logf("%v", &ProducerSnapshotError{Path: path, Reason: "unreadable", Err: err})
			continue
		}
		t, last, err := parseProducerSnapshot(data)
		if err == nil && t.end != off {
			err = fmt.Errorf("offset %d in a file named for %d", t.end, off)
		}
		if err != nil {
			logf("%v; the producer state is read from the log instead", &ProducerSnapshotError{Path: path, Reason: "malformed", Err: err})
			continue
		}
		recs, err := ll.Read(off-1, 1)
		if err != nil || len(recs) != 1 || recs[0].Offset != off-1 || DigestRecords(recs) != last {
			continue // the log was cut and written again past it: another history
		}
		return t
	}
	return nil
}

// saveProducerSnapshot writes t, whose last record is last, into ll's
// directory, durably, and removes the snapshots it makes needless: below
// the log start, or older than the newest ProducerSnapshotsKept.
func saveProducerSnapshot(fsys durable.FS, ll *segment.Log, t *producerTable, last log.Record, expiredBefore int64) error {
	dir := ll.Dir()
	data := encodeProducerSnapshot(t, last, expiredBefore)
	if err := durable.WriteFile(fsys, filepath.Join(dir, ProducerSnapshotFileName(t.end)), data); err != nil {
		return fmt.Errorf("cluster: write producer snapshot at %d: %w", t.end, err)
	}
	offs, err := producerSnapshots(fsys, dir)
	if err != nil {
		return fmt.Errorf("cluster: list producer snapshots: %w", err)
	}
	start := ll.LogStart()
	for i, off := range offs {
		if i >= ProducerSnapshotsKept || off <= start {
			if err := fsys.Remove(filepath.Join(dir, ProducerSnapshotFileName(off))); err != nil {
				return fmt.Errorf("cluster: remove producer snapshot at %d: %w", off, err)
			}
		}
	}
	return nil
}

// snapshotProducersAtClose snapshots every producer table of m's
// replicas that describes its log as it is and has changed since its last
// snapshot, as a clean shutdown does, so that the next start reads no log
// at all to know its producers. A snapshot that cannot be written is
// reported: the next start reads more of the log.
func (c *Cluster) snapshotProducersAtClose(m *member) {
	m.mu.Lock()
	replicas := make([]*replicaState, 0, len(m.replicas))
	for _, r := range m.replicas {
		replicas = append(replicas, r)
	}
	m.mu.Unlock()
	for _, r := range replicas {
		r.fmu.Lock()
		t := r.producers
		if t != nil && t.log != nil && t.end > 0 && t.end == t.log.NextOffset() && t.end != t.snapEnd {
			recs, err := t.log.Read(t.end-1, 1)
			if err == nil && len(recs) == 1 {
				err = saveProducerSnapshot(m.b.opts.FS, t.log, t, recs[0], m.b.opts.Now().UnixNano()-int64(ProducerExpiration))
			}
			if err != nil {
				c.logf("cluster: producer snapshot at close: %v", err)
			}
		}
		r.fmu.Unlock()
	}
}

// snapshotAsFollower keeps a follower's producer table and snapshots it
// when its log rolls, as its leader does, so that the follower, become
// leader, reads only the records past its last snapshot (or its table's
// end) to know its producers. The first append this process sees only
// notes the segment; the first roll after it builds the table (from the
// newest snapshot and the log past it), and the appends after that add
// their records to it as they come (replicate), so that each later roll
// only writes a snapshot. A snapshot
// that cannot be written is reported and the append stands. r.fmu must
// be held; l is the replica's log, leaderEpoch the epoch it follows.
func (c *Cluster) snapshotAsFollower(m *member, r *replicaState, l *segment.Log, leaderEpoch uint64) {
	active := l.ActiveBase()
	if !r.rollSeen {
		r.rollSeen, r.rollBase = true, active
		return
	}
	if r.rollBase == active {
		return
	}
	r.rollBase = active
	if !r.producers.fits(l) {
		// A leader's cut may have replaced records at the same epoch:
		// only the record at its end tells whether the table still
		// describes the log.
		r.producers = nil
	}
	t, err := c.producerTableOf(m, r, l, leaderEpoch)
	if err == nil && t.end > 0 {
		var recs []log.Record
		if recs, err = l.Read(t.end-1, 1); err == nil && len(recs) == 1 {
			c.maybeSnapshot(m, l, t, recs[0], m.b.opts.Now().UnixNano(), r.hw.Load())
		}
	}
	if err != nil {
		c.logf("cluster: producer snapshot of a follower: %v", err)
	}
}
