package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic/envelope"
)

// This file is what a partition's leader knows of its idempotent
// producers (Kafka's KIP-98): for each producer id, the epoch it writes
// with and where its last records landed, so that a batch sent again —
// its answer was lost, and the client cannot know whether it was written
// — is answered with the offsets it was written at and not stored twice.
//
// The producer identity travels inside each record's envelope
// (envelope.Producer), so it reaches every follower with the records and
// the table is only a cache of the log: a follower that becomes leader,
// or a broker that restarts, rebuilds it from the newest snapshot that
// fits the log and the records past it (producerTableOf,
// producersnapshot.go). The leader keeps the table up to date with its
// own appends, and a follower with its replicated ones while the table
// still fits its log; anything else that changes the log (a cut, a
// reopen, a new leader epoch) leaves the table at another log end,
// record at its end, leader epoch or log, and the next use reads past
// its end or rebuilds it. The same table tracks each producer's open
// transaction, for the last stable offset (markers.go).

// ProducerExpiration is how long a producer that writes nothing more is
// remembered: Kafka's producer.id.expiration.ms default. A producer
// silent for longer starts again from sequence 0 (or is told its id is
// unknown).
const ProducerExpiration = 24 * time.Hour

// producerRunsKept is how many runs of records of one producer the
// table keeps: Kafka keeps five batches, the most a client has in flight
// to one partition.
const producerRunsKept = 5

// Errors of the idempotent producer rules. A ProducerError wraps one.
var (
	// ErrOutOfOrderSequence: the batch does not start where the
	// producer's last one ended (a gap), or a new epoch does not start
	// at 0. Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER.
	ErrOutOfOrderSequence = errors.New("out of order sequence number")
	// ErrDuplicateSequence: the batch was written before, longer ago
	// than the table remembers where. Kafka's DUPLICATE_SEQUENCE_NUMBER:
	// nothing is written and the client counts the batch written.
	ErrDuplicateSequence = errors.New("duplicate sequence number")
	// ErrInvalidProducerEpoch: a newer epoch of the producer id has
	// written (the producer was fenced). Kafka's INVALID_PRODUCER_EPOCH.
	ErrInvalidProducerEpoch = errors.New("invalid producer epoch")
	// ErrUnknownProducer: the partition knows nothing of the producer
	// (never written, or expired) and the batch does not start at
	// sequence 0. Kafka's UNKNOWN_PRODUCER_ID.
	ErrUnknownProducer = errors.New("unknown producer id")
	// ErrInvalidProducerBatch: one request's records are not one
	// producer's consecutive sequence numbers.
	ErrInvalidProducerBatch = errors.New("records of one request must be one producer's consecutive sequence numbers")
)

// The rules a ProducerError names (its Rule), each with its sentinel.
const (
	RuleOutOfOrder   = "out-of-order-sequence"
	RuleDuplicate    = "duplicate-sequence"
	RuleInvalidEpoch = "invalid-producer-epoch"
	RuleUnknown      = "unknown-producer"
	RuleInvalidBatch = "invalid-producer-batch"
)

var producerRules = map[string]error{
	RuleOutOfOrder:   ErrOutOfOrderSequence,
	RuleDuplicate:    ErrDuplicateSequence,
	RuleInvalidEpoch: ErrInvalidProducerEpoch,
	RuleUnknown:      ErrUnknownProducer,
	RuleInvalidBatch: ErrInvalidProducerBatch,
}

// ProducerError is a write refused by the idempotent producer rules; it
// unwraps to the sentinel of its Rule. Its fields are plain, so that it
// keeps its type from the leader's process to the one that forwarded the
// write.
type ProducerError struct {
	Topic     string
	Partition int
	Producer  envelope.Producer
	// Expected is the sequence number the partition expected next, -1
	// when it expects none in particular.
	Expected int64
	// Rule is the rule broken: one of the Rule constants.
	Rule string
}

func (e *ProducerError) Error() string {
	s := fmt.Sprintf("cluster: %s/%d: producer %d epoch %d sequence %d: %v", e.Topic, e.Partition, e.Producer.ID, e.Producer.Epoch, e.Producer.Sequence, e.Unwrap())
	if e.Expected >= 0 {
		s += fmt.Sprintf(" (expected %d)", e.Expected)
	}
	return s
}

// Unwrap returns the sentinel of e's rule.
func (e *ProducerError) Unwrap() error {
	if err, ok := producerRules[e.Rule]; ok {
		return err
	}
	return ErrInvalidProducerBatch
}

// DuplicateNotCommittedError: a batch sent again was written before, but
// not yet by every active replica — its first attempt failed after the
// leader's append, or is still being written. It is retriable: once the
// followers hold it, the same batch is answered with its offsets.
type DuplicateNotCommittedError struct {
	Topic     string
	Partition int
	Producer  envelope.Producer
	HW        uint64
}

func (e *DuplicateNotCommittedError) Error() string {
	return fmt.Sprintf("cluster: %s/%d: producer %d's batch at sequence %d was written before, but not yet by every active replica (high watermark %d); send it again",
		e.Topic, e.Partition, e.Producer.ID, e.Producer.Sequence, e.HW)
}

// Unwrap makes the error an unavailable broker's: retriable, as one.
func (e *DuplicateNotCommittedError) Unwrap() error { return ErrBrokerUnavailable }

// producerRun is records of one producer and epoch at consecutive
// offsets with consecutive sequence numbers: one batch, or several
// appended back to back.
type producerRun struct {
	firstSeq    int32
	count       int64
	firstOffset uint64
	// timestamp is the append time of the run's first record.
	timestamp int64
}

// lastSeq is the sequence number of the run's last record.
func (r producerRun) lastSeq() int64 { return int64(r.firstSeq) + r.count - 1 }

// producerEntry is one producer id's state.
type producerEntry struct {
	epoch int16
	// runs are the newest, oldest first; at most producerRunsKept.
	runs []producerRun
	// lastWrite is the append time of its last record.
	lastWrite int64
	// open is set while the producer has a transaction open in the
	// partition: from its first transactional record, at txnFirst, to
	// its marker.
	open     bool
	txnFirst uint64
	// markerVersion is the highest version of the producer's markers
	// applied (WriteTxnMarkerAt), and markerOffset where that marker is.
	markerVersion uint64
	markerOffset  uint64
}

// next is the sequence number the producer's next batch must start at.
func (e *producerEntry) next() int32 {
	last := e.runs[len(e.runs)-1]
	return envelope.SequenceAt(last.firstSeq, last.count)
}

// add records that count records of producer p landed at offset, at ts;
// transactional ones open the producer's transaction when none is.
func (e *producerEntry) add(p envelope.Producer, count int64, offset uint64, ts int64, transactional bool) {
	if transactional && !e.open {
		e.open, e.txnFirst = true, offset
	}
	if p.Epoch != e.epoch {
		e.epoch, e.runs = p.Epoch, nil
	}
	if n := len(e.runs); n > 0 {
		last := &e.runs[n-1]
		if last.lastSeq()+1 == int64(p.Sequence) && last.firstOffset+uint64(last.count) == offset {
			last.count += count
			e.lastWrite = ts
			return
		}
	}
	e.runs = append(e.runs, producerRun{firstSeq: p.Sequence, count: count, firstOffset: offset, timestamp: ts})
	if len(e.runs) > producerRunsKept {
		e.runs = append(e.runs[:0], e.runs[len(e.runs)-producerRunsKept:]...)
	}
	e.lastWrite = ts
}

// find returns where the records [seq, seq+count) landed, when one run
// holds them all.
func (e *producerEntry) find(seq int32, count int64) (producerRun, bool) {
	for _, r := range e.runs {
		if int64(seq) >= int64(r.firstSeq) && int64(seq)+count-1 <= r.lastSeq() {
			d := int64(seq) - int64(r.firstSeq)
			return producerRun{firstSeq: seq, count: count, firstOffset: r.firstOffset + uint64(d), timestamp: r.timestamp}, true
		}
	}
	return producerRun{}, false
}

// producerTable is a leader's producers of one partition, as of its log
// at end. It is guarded by the replica's fmu.
type producerTable struct {
	log         *segment.Log
	leaderEpoch uint64
	end         uint64
	producers   map[int64]*producerEntry
	// last is the fingerprint of the record at end-1, when known: a
	// table whose log still holds that record there, and no less, is
	// brought up to date by reading past end alone (producerTableOf).
	last    recordPrint
	hasLast bool
	// snapBase is the active segment's base when the table was last
	// snapshotted (producersnapshot.go); the first append after a roll
	// snapshots it again.
	snapBase uint64
	// snapEnd is the end of the last snapshot written or read.
	snapEnd uint64
	// ended are the transactions whose marker is in the log: each
	// producer's first offset and marker offset, in marker order. An
	// ended transaction still holds the last stable offset back while its
	// marker is at or past the high watermark (lastStable), and an aborted
	// one is listed to readers (abortedIn).
	ended []endedTxn
}

// endedTxn is a transaction ended by a marker in the log.
type endedTxn struct {
	producerID int64
	first      uint64
	marker     uint64
	aborted    bool
}

// mark applies a marker m of producer p at offset, at ts: a newer epoch
// fences the older (its next batch starts at sequence 0), and the
// producer's open transaction ends there.
func (t *producerTable) mark(p envelope.Producer, m envelope.Marker, version uint64, offset uint64, ts int64) {
	e := t.entry(p.ID)
	if version > 0 && version <= e.markerVersion {
		// Stale, and appended only because the marker that overtook it
		// was not yet on every replica (checkMarker): it changes nothing.
		return
	}
	if version > 0 {
		e.markerVersion, e.markerOffset = version, offset
	}
	if p.Epoch != e.epoch {
		e.epoch, e.runs = p.Epoch, nil
	}
	e.lastWrite = ts
	if !e.open {
		return
	}
	e.open = false
	t.ended = append(t.ended, endedTxn{producerID: p.ID, first: e.txnFirst, marker: offset, aborted: m == envelope.AbortMarker})
}

// lastStable is the last stable offset at high watermark hw: the first
// offset of the earliest transaction that is open, or whose marker is not
// yet below hw; hw when there is none. Ended transactions wholly below hw
// are dropped but for the aborted ones, which readers are told of.
func (t *producerTable) lastStable(hw uint64) uint64 {
	lso := hw
	for _, e := range t.producers {
		if e.open && e.txnFirst < lso {
			lso = e.txnFirst
		}
	}
	t.forget(hw, 0)
	for _, x := range t.ended {
		if x.marker >= hw {
			lso = min(lso, x.first)
		}
	}
	return lso
}

// forget drops the ended transactions no reader needs: those whose marker
// is below logStart, which no reader can reach, and the committed ones
// whose marker is below hw, which no longer hold the last stable offset.
func (t *producerTable) forget(hw, logStart uint64) {
	keep := t.ended[:0]
	for _, x := range t.ended {
		if x.marker >= logStart && (x.aborted || x.marker >= hw) {
			keep = append(keep, x)
		}
	}
	clear(t.ended[len(keep):])
	t.ended = keep
}

// abortedIn returns the aborted transactions with records in [from, to),
// ascending by first offset, and forgets those that ended before
// logStart, which no reader can reach.
func (t *producerTable) abortedIn(from, to, logStart uint64) []AbortedTxn {
	var out []AbortedTxn
	t.forget(0, logStart)
	for _, x := range t.ended {
		if x.aborted && x.first < to && x.marker >= from {
			out = append(out, AbortedTxn{ProducerID: x.producerID, FirstOffset: x.first})
		}
	}
	slices.SortFunc(out, func(a, b AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return out
}

// validFor reports whether the table describes ll as it is now, for a
// leader at leaderEpoch.
func (t *producerTable) validFor(ll *segment.Log, leaderEpoch uint64) bool {
	return t != nil && t.log == ll && t.leaderEpoch == leaderEpoch && t.end == ll.NextOffset()
}

// recordPrint is a record's fingerprint: its timestamp, size and the
// CRC-32C of its payload.
type recordPrint struct {
	timestamp int64
	size      int
	crc       uint32
}

func printOf(rec log.Record) recordPrint {
	return recordPrint{timestamp: rec.Timestamp, size: len(rec.Payload), crc: crc32.Checksum(rec.Payload, snapshotCRC)}
}

// fits reports whether t still describes the first t.end records of ll:
// the same log, not cut below t.end, the record at t.end-1 the one t saw
// there. A log cut back and written again past t.end has another record
// there. A table that fits is brought up to date by reading past t.end.
func (t *producerTable) fits(ll *segment.Log) bool {
	if t == nil || t.log != ll || !t.hasLast || t.end > ll.NextOffset() || t.end <= ll.LogStart() {
		return false
	}
	recs, err := ll.Read(t.end-1, 1)
	return err == nil && len(recs) == 1 && recs[0].Offset == t.end-1 && printOf(recs[0]) == t.last
}

// producerScanBatch is how many records a rebuild reads at a time.
const producerScanBatch = 1024

// buildProducerTable reads ll and returns its producers: from t's end
// on, t updated, when t is a snapshot's table (producersnapshot.go); from
// the log start, when t is nil.
func buildProducerTable(ll *segment.Log, leaderEpoch uint64, t *producerTable) (*producerTable, error) {
	if t == nil {
		t = &producerTable{producers: map[int64]*producerEntry{}, end: ll.LogStart()}
	}
	t.log, t.leaderEpoch = ll, leaderEpoch
	end := ll.NextOffset()
	for at := t.end; at < end; {
		recs, err := ll.Read(at, producerScanBatch)
		if err != nil {
			return nil, fmt.Errorf("cluster: rebuild producer state at offset %d: %w", at, err)
		}
		if len(recs) == 0 {
			break
		}
		t.apply(recs)
		at = t.end
	}
	t.end = end
	return t, nil
}

// apply adds records read from the log at t's end, in order, to t: a
// rebuild's reading, or a follower's appends (snapshotAsFollower).
func (t *producerTable) apply(recs []log.Record) {
	for _, rec := range recs {
		id, ok := envelope.IdentityOf(rec.Payload)
		switch {
		case !ok:
		case id.Marker != envelope.NoMarker:
			t.mark(id.Producer, id.Marker, id.MarkerVersion, rec.Offset, rec.Timestamp)
		default:
			t.entry(id.Producer.ID).add(id.Producer, 1, rec.Offset, rec.Timestamp, id.Transactional)
		}
	}
	if n := len(recs); n > 0 {
		t.end = recs[n-1].Offset + 1
		t.last, t.hasLast = printOf(recs[n-1]), true
	}
}

// producerTableOf returns the producer table of replica r, whose log is
// ll, for a leader at leaderEpoch: r's own while it describes ll, or
// brought up to date from its end while it fits ll, else one rebuilt from
// ll's newest fitting snapshot and the log past it. r.fmu must be held.
func (c *Cluster) producerTableOf(m *member, r *replicaState, ll *segment.Log, leaderEpoch uint64) (*producerTable, error) {
	if r.producers.validFor(ll, leaderEpoch) {
		return r.producers, nil
	}
	if t := r.producers; t.fits(ll) {
		// Kept as a follower, or as the leader of an earlier epoch: the
		// records since are all there is to read.
		return buildProducerTable(ll, leaderEpoch, t)
	}
	snap := loadProducerSnapshot(m.b.opts.FS, ll, c.logf)
	var snapEnd uint64
	if snap != nil {
		snapEnd = snap.end
	}
	active := ll.ActiveBase()
	t, err := buildProducerTable(ll, leaderEpoch, snap)
	if err != nil {
		return nil, err
	}
	// The next append snapshots the table when no snapshot of this
	// segment exists yet.
	t.snapBase, t.snapEnd = active, snapEnd
	if snapEnd < active {
		t.snapBase = math.MaxUint64
	}
	r.producers = t
	return t, nil
}

// maybeSnapshot writes t to disk when ll has rolled to a new segment since
// t's last snapshot; last is the last record appended, hw the replica's
// high watermark. The ended transactions no reader needs are forgotten
// first, so that neither the table nor its snapshots grow with every
// transaction ever ended (no read of the last stable offset may come to
// forget them: on a follower none does). A snapshot that cannot be
// written is reported, and the write that led to it stands: a snapshot
// only saves a later rebuild some reading.
func (c *Cluster) maybeSnapshot(m *member, ll *segment.Log, t *producerTable, last log.Record, now int64, hw uint64) {
	active := ll.ActiveBase()
	if t.snapBase == active || t.end != last.Offset+1 {
		return
	}
	t.forget(hw, ll.LogStart())
	t.snapBase, t.snapEnd = active, t.end
	if err := saveProducerSnapshot(m.b.opts.FS, ll, t, last, now-int64(ProducerExpiration)); err != nil {
		c.logf("%v", err)
	}
}

// entry returns producer id's entry, made when missing.
func (t *producerTable) entry(id int64) *producerEntry {
	e, ok := t.producers[id]
	if !ok {
		e = &producerEntry{}
		t.producers[id] = e
	}
	return e
}

// producerOfRequest returns the producer identity of a request's
// records (the first record's), has false when none carries one; ok is
// false when some do and some do not, they are not one producer's
// consecutive sequence numbers, some are transactional and some not, or a
// marker is not alone in its request.
func producerOfRequest(payloads [][]byte) (first envelope.Identity, has, ok bool) {
	for i, pl := range payloads {
		id, with := envelope.IdentityOf(pl)
		p := id.Producer
		switch {
		case i == 0:
			first, has = id, with
		case with != has:
			return first, has, false
		case with && (p.ID != first.Producer.ID || p.Epoch != first.Producer.Epoch ||
			p.Sequence != envelope.SequenceAt(first.Producer.Sequence, int64(i)) ||
			id.Transactional != first.Transactional || id.Marker != envelope.NoMarker || first.Marker != envelope.NoMarker):
			return first, has, false
		}
	}
	return first, has, true
}

// verdict is what the table says of one request.
type verdict struct {
	// dup is set when the records were written before, at run.
	dup bool
	run producerRun
	// producer is the request's producer, when has; transactional and
	// marker are what its records are.
	producer      envelope.Producer
	has           bool
	transactional bool
	marker        envelope.Marker
	markerVersion uint64
	// stale is set for a versioned marker whose version is not above the
	// last the producer's markers reached: answered with that marker's
	// offset (run), not stored.
	stale bool
}

// check applies the idempotent producer rules to one request of count
// records by producer p at now, before anything is appended. A request
// accepted for append is not yet in the table: note adds it once
// appended. pending holds the sequence numbers that requests accepted
// earlier in the same batch will take, by producer id.
func (t *producerTable) check(p envelope.Producer, count int64, now int64, pending map[int64]envelope.Producer) (verdict, error) {
	v := verdict{producer: p, has: true}
	if q, ok := pending[p.ID]; ok {
		// An earlier request of this batch comes first.
		switch {
		case p.Epoch == q.Epoch && p.Sequence == q.Sequence:
			return v, nil
		case p.Epoch == q.Epoch && p.Sequence < q.Sequence:
			return v, &DuplicateNotCommittedError{Producer: p}
		}
		return v, &ProducerError{Producer: p, Expected: int64(q.Sequence), Rule: RuleOutOfOrder}
	}
	e, ok := t.producers[p.ID]
	if ok && now-e.lastWrite > int64(ProducerExpiration) {
		ok = false
	}
	switch {
	case ok && p.Epoch < e.epoch:
		// Fenced: by a newer epoch's records, or by a marker of one
		// (which leaves no runs).
		return v, &ProducerError{Producer: p, Expected: -1, Rule: RuleInvalidEpoch}
	case !ok || len(e.runs) == 0:
		if p.Sequence != 0 {
			return v, &ProducerError{Producer: p, Expected: 0, Rule: RuleUnknown}
		}
	case p.Epoch > e.epoch:
		if p.Sequence != 0 {
			return v, &ProducerError{Producer: p, Expected: 0, Rule: RuleOutOfOrder}
		}
	default:
		if next := e.next(); p.Sequence != next {
			if run, found := e.find(p.Sequence, count); found {
				v.dup, v.run = true, run
				return v, nil
			}
			if int64(p.Sequence) < int64(next) {
				return v, &ProducerError{Producer: p, Expected: int64(next), Rule: RuleDuplicate}
			}
			return v, &ProducerError{Producer: p, Expected: int64(next), Rule: RuleOutOfOrder}
		}
	}
	return v, nil
}

// checkMarker applies the rules of a transaction marker of producer p at
// version: it may not come from an epoch older than the one the partition
// knows, which a newer producer of the same transactional id (or the
// coordinator's abort of a transaction that ran out of time) has fenced;
// and a versioned one not above the producer's last marker's version is
// stale (WriteTxnMarkerAt), at high watermark hw.
func (t *producerTable) checkMarker(p envelope.Producer, version, hw uint64, pending map[int64]envelope.Producer) (verdict, error) {
	v := verdict{producer: p, has: true}
	epoch, known := int16(-1), false
	if e, ok := t.producers[p.ID]; ok {
		epoch, known = e.epoch, true
		// Stale: not stored once the marker that overtook it is on every
		// replica. Until then it is appended and changes nothing (mark):
		// no transaction of the producer can be open after a marker its
		// coordinator has not yet seen acknowledged, and the append
		// carries the earlier marker to the followers that lack it.
		v.stale = version > 0 && version <= e.markerVersion && e.markerOffset < hw
		v.run = producerRun{count: 1, firstOffset: e.markerOffset}
	}
	if q, ok := pending[p.ID]; ok {
		epoch, known = q.Epoch, true
	}
	if known && p.Epoch < epoch {
		return v, &ProducerError{Producer: p, Expected: -1, Rule: RuleInvalidEpoch}
	}
	return v, nil
}

// note adds appended records to the table: recs, written for requests
// whose verdicts are vs, in order, with each request's record count.
func (t *producerTable) note(vs []verdict, counts []int, recs []log.Record) {
	at := 0
	for i, v := range vs {
		switch {
		case !v.has || len(recs) <= at:
		case v.marker != envelope.NoMarker:
			t.mark(v.producer, v.marker, v.markerVersion, recs[at].Offset, recs[at].Timestamp)
		default:
			t.entry(v.producer.ID).add(v.producer, int64(counts[i]), recs[at].Offset, recs[at].Timestamp, v.transactional)
		}
		at += counts[i]
	}
	if len(recs) > 0 {
		t.end = recs[len(recs)-1].Offset + 1
		t.last, t.hasLast = printOf(recs[len(recs)-1]), true
	}
}

// screenLocked applies the idempotent producer rules to a batch's
// requests on the leader, before the append: a request written before is
// answered with the offsets it was written at (or told to come again,
// while its first write is not yet on every active replica), a request
// that breaks the rules gets its error, and the others are returned, with
// their payloads, to be appended. t is the table to note the append in;
// nil when no valid table was at hand and no request needed one. r.fmu
// must be held.
func (c *Cluster) screenLocked(m *member, r *replicaState, p *partition, pm PartitionMetadata, ll *segment.Log, reqs []*sendRequest, now int64) (fresh []*sendRequest, t *producerTable, vs []verdict, counts []int, payloads [][]byte) {
	if r.producers.validFor(ll, pm.LeaderEpoch) {
		t = r.producers
	}
	pending := map[int64]envelope.Producer{}
	for _, req := range reqs {
		id, has, ok := producerOfRequest(req.payloads)
		prod := id.Producer
		if !ok {
			req.err = &ProducerError{Topic: p.topic, Partition: p.index, Producer: prod, Expected: -1, Rule: RuleInvalidBatch}
			continue
		}
		var v verdict
		var err error
		if has {
			if t == nil {
				if t, err = c.producerTableOf(m, r, ll, pm.LeaderEpoch); err != nil {
					req.err = err
					continue
				}
			}
			count := int64(len(req.payloads))
			if id.Marker != envelope.NoMarker {
				v, err = t.checkMarker(prod, id.MarkerVersion, p.hw.Load(), pending)
			} else {
				v, err = t.check(prod, count, now, pending)
			}
			v.transactional, v.marker, v.markerVersion = id.Transactional, id.Marker, id.MarkerVersion
			if err != nil {
				var pe *ProducerError
				var dn *DuplicateNotCommittedError
				switch {
				case errors.As(err, &pe):
					pe.Topic, pe.Partition = p.topic, p.index
				case errors.As(err, &dn):
					dn.Topic, dn.Partition, dn.HW = p.topic, p.index, p.hw.Load()
				}
				req.err = err
				continue
			}
			if v.dup {
				c.answerDuplicate(p, pm, req, prod, v.run)
				continue
			}
			if v.stale {
				// Overtaken: answered with the marker that overtook it,
				// one placement for its one record, and not stored.
				answerRun(pm, req, v.run)
				continue
			}
			if id.Marker != envelope.NoMarker {
				// A marker moves no sequence; a newer epoch starts at 0.
				if q, ok := pending[prod.ID]; !ok || q.Epoch != prod.Epoch {
					next := int32(0)
					if e, ok := t.producers[prod.ID]; ok && e.epoch == prod.Epoch && len(e.runs) > 0 {
						next = e.next()
					}
					pending[prod.ID] = envelope.Producer{ID: prod.ID, Epoch: prod.Epoch, Sequence: next}
				}
			} else {
				pending[prod.ID] = envelope.Producer{ID: prod.ID, Epoch: prod.Epoch, Sequence: envelope.SequenceAt(prod.Sequence, count)}
			}
		}
		fresh = append(fresh, req)
		vs = append(vs, v)
		counts = append(counts, len(req.payloads))
		payloads = append(payloads, req.payloads...)
	}
	return fresh, t, vs, counts, payloads
}

// answerDuplicate answers req, whose records were written before at run:
// with their offsets once every active replica holds them (below the
// high watermark), with a retriable error until then.
func (c *Cluster) answerDuplicate(p *partition, pm PartitionMetadata, req *sendRequest, prod envelope.Producer, run producerRun) {
	if hw := p.hw.Load(); run.firstOffset+uint64(run.count) > hw {
		req.err = &DuplicateNotCommittedError{Topic: p.topic, Partition: p.index, Producer: prod, HW: hw}
		req.unsettled = &run
		return
	}
	answerRun(pm, req, run)
}

// answerRun answers req with the offsets of run, where its records were
// written before.
func answerRun(pm PartitionMetadata, req *sendRequest, run producerRun) {
	req.err = nil
	req.recs = make([]log.Record, run.count)
	for i := range req.recs {
		req.recs[i] = log.Record{Offset: run.firstOffset + uint64(i), Timestamp: run.timestamp}
	}
	req.brokers = slices.Clone(pm.Active)
}

// settleDuplicates answers the requests of batch sent again whose first
// write was not below the high watermark when the leader screened them
// (outside the replica's lock, which the followers' answers must not
// hold): with its offsets, once the high watermark, brought up to date,
// has passed it — a retry after a restart, when the watermark has not yet
// been refreshed, is answered at once — and with the retriable
// DuplicateNotCommittedError otherwise.
func (c *Cluster) settleDuplicates(p *partition, pm PartitionMetadata, batch []*sendRequest) {
	hw, asked := uint64(0), false
	for _, req := range batch {
		run := req.unsettled
		if run == nil {
			continue
		}
		req.unsettled = nil
		if !asked {
			hw, asked = c.refreshHW(p), true
		}
		if run.firstOffset+uint64(run.count) <= hw {
			answerRun(pm, req, *run)
		}
	}
}
