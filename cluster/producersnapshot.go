package cluster

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
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
// newest producerSnapshotsKept are kept, so that retention, which drops
// whole segments, never takes a live producer's state with them.

// ProducerSnapshotSuffix ends the name of a producer snapshot: the offset
// it describes the log up to, in 20 digits, then the suffix.
const ProducerSnapshotSuffix = ".producers"

// producerSnapshotsKept is how many snapshots a replica keeps.
const producerSnapshotsKept = 2

// maxProducerSnapshotSize bounds what a snapshot read loads.
const maxProducerSnapshotSize = 256 << 20

// producerSnapshotMagic starts every snapshot; its CRC-32C (Castagnoli)
// of the JSON body follows, big-endian, then the body.
const producerSnapshotMagic = "PSPR"

var snapshotCRC = crc32.MakeTable(crc32.Castagnoli)

// ProducerSnapshotFileName is the name of the snapshot at offset.
func ProducerSnapshotFileName(offset uint64) string {
	return fmt.Sprintf("%020d%s", offset, ProducerSnapshotSuffix)
}

// parseProducerSnapshotFileName returns the offset a snapshot's name
// holds.
func parseProducerSnapshotFileName(name string) (uint64, bool) {
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

// producerSnapshot is a snapshot's body.
type producerSnapshot struct {
	Version int `json:"version"`
	// Offset is the log end the table describes; Last the digest of the
	// record at Offset-1.
	Offset    uint64                  `json:"offset"`
	Last      Digest                  `json:"last"`
	Producers []snapshotProducerEntry `json:"producers"`
	Ended     []snapshotEndedTxn      `json:"ended"`
}

type snapshotProducerEntry struct {
	ID        int64         `json:"id"`
	Epoch     int16         `json:"epoch"`
	LastWrite int64         `json:"last_write"`
	Open      bool          `json:"open"`
	TxnFirst  uint64        `json:"txn_first"`
	Runs      []snapshotRun `json:"runs"`
}

type snapshotRun struct {
	FirstSeq    int32  `json:"first_seq"`
	Count       int64  `json:"count"`
	FirstOffset uint64 `json:"first_offset"`
	Timestamp   int64  `json:"timestamp"`
}

type snapshotEndedTxn struct {
	ProducerID int64  `json:"producer_id"`
	First      uint64 `json:"first"`
	Marker     uint64 `json:"marker"`
	Aborted    bool   `json:"aborted"`
}

// encodeProducerSnapshot is the snapshot file of table t, whose last
// record is last; it leaves out producers silent since before expiredBefore.
func encodeProducerSnapshot(t *producerTable, last log.Record, expiredBefore int64) ([]byte, error) {
	s := producerSnapshot{Version: 1, Offset: t.end, Last: DigestRecords([]log.Record{last}),
		Producers: []snapshotProducerEntry{}, Ended: []snapshotEndedTxn{}}
	for id, e := range t.producers {
		if e.lastWrite < expiredBefore && !e.open {
			continue
		}
		se := snapshotProducerEntry{ID: id, Epoch: e.epoch, LastWrite: e.lastWrite, Open: e.open, TxnFirst: e.txnFirst, Runs: []snapshotRun{}}
		for _, r := range e.runs {
			se.Runs = append(se.Runs, snapshotRun{FirstSeq: r.firstSeq, Count: r.count, FirstOffset: r.firstOffset, Timestamp: r.timestamp})
		}
		s.Producers = append(s.Producers, se)
	}
	slices.SortFunc(s.Producers, func(a, b snapshotProducerEntry) int { return cmp.Compare(a.ID, b.ID) })
	for _, x := range t.ended {
		s.Ended = append(s.Ended, snapshotEndedTxn{ProducerID: x.producerID, First: x.first, Marker: x.marker, Aborted: x.aborted})
	}
	body, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("cluster: encode producer snapshot: %w", err)
	}
	out := make([]byte, 0, len(producerSnapshotMagic)+4+len(body))
	out = append(out, producerSnapshotMagic...)
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(body, snapshotCRC))
	return append(out, body...), nil
}

// parseProducerSnapshot is the one decoder of a snapshot file: a table
// (for no log yet) and the digest of its last record, or an error saying
// what is wrong.
func parseProducerSnapshot(data []byte) (*producerTable, Digest, error) {
	h := len(producerSnapshotMagic) + 4
	if len(data) < h || string(data[:len(producerSnapshotMagic)]) != producerSnapshotMagic {
		return nil, Digest{}, errors.New("no snapshot magic")
	}
	body := data[h:]
	if crc32.Checksum(body, snapshotCRC) != binary.BigEndian.Uint32(data[len(producerSnapshotMagic):]) {
		return nil, Digest{}, errors.New("checksum mismatch")
	}
	var s producerSnapshot
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, Digest{}, fmt.Errorf("body: %w", err)
	}
	if dec.More() {
		return nil, Digest{}, errors.New("bytes after the body")
	}
	if s.Version != 1 {
		return nil, Digest{}, fmt.Errorf("unknown version %d", s.Version)
	}
	if s.Offset == 0 {
		return nil, Digest{}, errors.New("offset 0: a snapshot describes at least one record")
	}
	t := &producerTable{end: s.Offset, producers: make(map[int64]*producerEntry, len(s.Producers))}
	for _, p := range s.Producers {
		if p.ID < 0 || p.Epoch < 0 || len(p.Runs) > producerRunsKept {
			return nil, Digest{}, fmt.Errorf("producer %d: invalid id, epoch or runs", p.ID)
		}
		if _, dup := t.producers[p.ID]; dup {
			return nil, Digest{}, fmt.Errorf("producer %d listed twice", p.ID)
		}
		if p.Open && p.TxnFirst >= s.Offset {
			return nil, Digest{}, fmt.Errorf("producer %d: open transaction at %d, past the snapshot", p.ID, p.TxnFirst)
		}
		e := &producerEntry{epoch: p.Epoch, lastWrite: p.LastWrite, open: p.Open, txnFirst: p.TxnFirst}
		for _, r := range p.Runs {
			if r.FirstSeq < 0 || r.Count < 1 || r.FirstOffset >= s.Offset || uint64(r.Count) > s.Offset-r.FirstOffset {
				return nil, Digest{}, fmt.Errorf("producer %d: invalid run", p.ID)
			}
			e.runs = append(e.runs, producerRun{firstSeq: r.FirstSeq, count: r.Count, firstOffset: r.FirstOffset, timestamp: r.Timestamp})
		}
		t.producers[p.ID] = e
	}
	for _, x := range s.Ended {
		if x.ProducerID < 0 || x.First > x.Marker || x.Marker >= s.Offset {
			return nil, Digest{}, fmt.Errorf("ended transaction of producer %d: invalid offsets", x.ProducerID)
		}
		t.ended = append(t.ended, endedTxn{producerID: x.ProducerID, first: x.First, marker: x.Marker, aborted: x.Aborted})
	}
	return t, s.Last, nil
}

// producerSnapshots lists the snapshots in dir, newest first.
func producerSnapshots(fsys durable.FS, dir string) ([]uint64, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var offs []uint64
	for _, e := range entries {
		if off, ok := parseProducerSnapshotFileName(e.Name()); ok {
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
// the log start, or older than the newest producerSnapshotsKept.
func saveProducerSnapshot(fsys durable.FS, ll *segment.Log, t *producerTable, last log.Record, expiredBefore int64) error {
	dir := ll.Dir()
	data, err := encodeProducerSnapshot(t, last, expiredBefore)
	if err != nil {
		return err
	}
	if err := durable.WriteFile(fsys, filepath.Join(dir, ProducerSnapshotFileName(t.end)), data); err != nil {
		return fmt.Errorf("cluster: write producer snapshot at %d: %w", t.end, err)
	}
	offs, err := producerSnapshots(fsys, dir)
	if err != nil {
		return fmt.Errorf("cluster: list producer snapshots: %w", err)
	}
	start := ll.LogStart()
	for i, off := range offs {
		if i >= producerSnapshotsKept || off <= start {
			if err := fsys.Remove(filepath.Join(dir, ProducerSnapshotFileName(off))); err != nil {
				return fmt.Errorf("cluster: remove producer snapshot at %d: %w", off, err)
			}
		}
	}
	return nil
}
