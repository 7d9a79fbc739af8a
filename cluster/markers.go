package cluster

import (
	"context"
	"errors"

	"github.com/pystream/pystream/log"
)

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

// WriteTxnMarker writes a transaction marker — commit or abort — of
// producer id at epoch into a partition, through its leader, once every
// active replica holds it.
func (c *Cluster) WriteTxnMarker(ctx context.Context, topicName string, partition int, producerID int64, epoch int16, commit bool) error {
	return errors.ErrUnsupported
}

// ReadStable reads up to maxRecords records from start, never past the
// last stable offset, with the aborted transactions among them; with
// maxRecords 0, only the bounds.
func (c *Cluster) ReadStable(topicName string, partition int, start uint64, maxRecords int) (StableRead, error) {
	return StableRead{}, errors.ErrUnsupported
}
