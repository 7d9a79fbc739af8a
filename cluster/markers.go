package cluster

import (
	"context"
	"fmt"
	"math"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic/envelope"
)

// This file is a partition's side of transactions: the markers that end
// a producer's transaction in it, and the reads of a read_committed
// consumer, which stop at the last stable offset and learn which
// transactions were aborted. What a leader knows of its producers'
// transactions is kept with their sequence numbers (producers.go): a
// transaction is open from its producer's first transactional record to
// its marker, and that table is rebuilt from the log as the rest is.

// maxAbortedPerRead bounds the aborted transactions one read reports: a
// read that would report more stops before the first one past it.
const maxAbortedPerRead = 1000

// AbortedTxn is a transaction that was aborted in a partition: its
// producer and the offset of its first record. A read_committed reader
// skips that producer's transactional records from FirstOffset up to its
// abort marker.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset uint64
}

// StableRead is a read for a read_committed consumer: records below the
// last stable offset (no transaction left open below it), and the aborted
// transactions among them.
type StableRead struct {
	Records                             []log.Record
	LogStart, HighWatermark, LastStable uint64
	Aborted                             []AbortedTxn
}

// MarkerPayload is what a transaction marker stores: an envelope with the
// producer's id and epoch, flagged transactional, the marker and its
// version (0 for none).
func MarkerPayload(producerID int64, epoch int16, commit bool, version uint64) []byte {
	m := envelope.AbortMarker
	if commit {
		m = envelope.CommitMarker
	}
	return envelope.Encode(envelope.Record{Producer: envelope.Producer{ID: producerID, Epoch: epoch},
		HasProducer: true, Transactional: true, Marker: m, MarkerVersion: version})
}

// WriteTxnMarker writes a transaction marker — commit or abort — of
// producer id at epoch into a partition, through its leader, and returns
// once every active replica holds it. It ends the producer's open
// transaction there (a marker with none open changes nothing but the
// epoch), and a marker of a newer epoch fences the older one: its
// records are refused from then on. A marker of an epoch older than the
// partition knows is a *ProducerError (ErrInvalidProducerEpoch). The
// marker has no version: WriteTxnMarkerAt's rule does not apply to it.
func (c *Cluster) WriteTxnMarker(ctx context.Context, topicName string, partition int, producerID int64, epoch int16, commit bool) error {
	return c.WriteTxnMarkerAt(ctx, topicName, partition, producerID, epoch, commit, 0)
}

// WriteTxnMarkerAt is WriteTxnMarker with the marker's version: the
// version of the coordinator's state that decided the end
// (Transaction.Version). A partition applies a producer's versioned
// markers in rising version only: one whose version is not above the last
// it applied for the producer — sent again, or sent late by a
// coordinator that was paused while another finished the transaction —
// is answered as written and stores nothing, so it can never end the
// producer's next transaction.
func (c *Cluster) WriteTxnMarkerAt(ctx context.Context, topicName string, partition int, producerID int64, epoch int16, commit bool, version uint64) error {
	if producerID < 0 || epoch < 0 {
		return fmt.Errorf("cluster: marker of producer %d epoch %d: %w", producerID, epoch, ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := c.partition(topicName, partition)
	if err != nil {
		return err
	}
	_, err = c.write(p, [][]byte{MarkerPayload(producerID, epoch, commit, version)})
	return err
}

// ReadStable reads up to maxRecords records of a partition from start,
// from its leader as ReadCommitted does, but never past the last stable
// offset — the first offset of the earliest transaction not yet ended
// below the high watermark — and reports the aborted transactions with
// records among those read. With maxRecords 0 it returns only the bounds.
func (c *Cluster) ReadStable(topicName string, partition int, start uint64, maxRecords int) (StableRead, error) {
	if maxRecords < 0 {
		return StableRead{}, fmt.Errorf("cluster: read %s/%d: maxRecords %d < 0: %w", topicName, partition, maxRecords, ErrInvalidArgument)
	}
	maxBytes := math.MaxInt
	if maxRecords == 0 {
		maxBytes = 0
	}
	res, err := c.readCommitted(RecordsRequest{Topic: topicName, Partition: partition, From: start, MaxRecords: maxRecords,
		MaxBytes: maxBytes, Committed: true, Stable: true})
	if err != nil {
		return StableRead{}, err
	}
	return StableRead{Records: res.Records, LogStart: res.LogStart, HighWatermark: res.HighWatermark,
		LastStable: res.LastStable, Aborted: res.Aborted}, nil
}

// lastStableLocal returns the last stable offset of a partition whose
// leader, m, this process hosts, at high watermark hw (never below the
// log start), and the aborted
// transactions with records in [from, to) when to > from. It rebuilds
// the leader's producer table when it is not current.
func (c *Cluster) lastStableLocal(m *member, p *partition, pm PartitionMetadata, hw, from, to uint64) (uint64, []AbortedTxn, error) {
	r := m.replica(replicaKey{p.topic, p.index})
	r.fmu.Lock()
	defer r.fmu.Unlock()
	_, ll, err := c.leaderLog(p, pm)
	if err != nil {
		return 0, nil, err
	}
	t, err := c.producerTableOf(m, r, ll, pm.LeaderEpoch)
	if err != nil {
		return 0, nil, err
	}
	// An open transaction whose first records retention dropped holds
	// the offset at the log start, as Kafka clamps it: never below what
	// a reader can fetch.
	lso := max(t.lastStable(hw), min(ll.LogStart(), hw))
	var aborted []AbortedTxn
	if to > from {
		aborted = t.abortedIn(from, to, ll.LogStart())
	}
	return lso, aborted, nil
}

// abortedAmong sets res.Aborted to the aborted transactions among the
// records read for req from a leader's log, at most maxAbortedPerRead of
// them: a read that would report more is cut before the first one past
// them.
func (c *Cluster) abortedAmong(m *member, p *partition, pm PartitionMetadata, req RecordsRequest, res *RecordsResponse) error {
	n := len(res.Records)
	if n == 0 {
		return nil
	}
	_, aborted, err := c.lastStableLocal(m, p, pm, res.HighWatermark, req.From, res.Records[n-1].Offset+1)
	if err != nil {
		return err
	}
	if len(aborted) > maxAbortedPerRead {
		cut := aborted[maxAbortedPerRead].FirstOffset
		for n > 1 && res.Records[n-1].Offset >= cut {
			n--
		}
		res.Records = res.Records[:n]
		aborted = aborted[:maxAbortedPerRead]
	}
	res.Aborted = aborted
	return nil
}
