package cluster

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// txnBatch is n transactional records of producer id at epoch, from
// sequence seq.
func txnBatch(id int64, epoch int16, seq int32, n int) []topic.Message {
	msgs := make([]topic.Message, n)
	for i := range msgs {
		r := envelope.Record{Value: []byte{'t', byte(seq) + byte(i)}, HasProducer: true, Transactional: true,
			Producer: envelope.Producer{ID: id, Epoch: epoch, Sequence: seq + int32(i)}}
		msgs[i] = topic.Message{Payload: envelope.Payload(r)}
	}
	return msgs
}

// stable is a stable read of the whole partition from offset from.
func stable(t *testing.T, c *Cluster, topicName string, from uint64) StableRead {
	t.Helper()
	r, err := c.ReadStable(topicName, 0, from, 1000)
	require.NoError(t, err)
	return r
}

// TestMarkersLastStableOffset: an open transaction holds the last stable
// offset at its first record, so a read_committed reader stops there;
// its commit marker lets the reader past it, with nothing reported
// aborted; an abort marker lets it past too, and the aborted transaction
// is reported to every read that reaches its records. Two producers'
// transactions hold the offset at the earlier one.
func TestMarkersLastStableOffset(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	ctx := context.Background()

	_, err := prod.Send(nil, []byte("plain")) // 0
	require.NoError(t, err)
	_, err = prod.SendBatchTo(0, txnBatch(7, 0, 0, 2)) // 1, 2
	require.NoError(t, err)
	_, err = prod.SendBatchTo(0, txnBatch(8, 0, 0, 1)) // 3
	require.NoError(t, err)
	r := stable(t, c, "orders", 0)
	require.Equal(t, uint64(4), r.HighWatermark)
	require.Equal(t, uint64(1), r.LastStable, "producer 7's open transaction")
	require.Len(t, r.Records, 1, "only what is below it")

	require.NoError(t, c.WriteTxnMarker(ctx, "orders", 0, 7, 0, true)) // 4
	r = stable(t, c, "orders", 0)
	require.Equal(t, uint64(3), r.LastStable, "producer 8's is open still")
	require.Len(t, r.Records, 3)
	require.Empty(t, r.Aborted)

	_, err = prod.SendBatchTo(0, txnBatch(7, 0, 2, 1)) // 5: 7's next transaction
	require.NoError(t, err)
	require.NoError(t, c.WriteTxnMarker(ctx, "orders", 0, 8, 0, false)) // 6
	r = stable(t, c, "orders", 0)
	require.Equal(t, uint64(5), r.LastStable)
	require.Equal(t, []AbortedTxn{{ProducerID: 8, FirstOffset: 3}}, r.Aborted)
	require.Equal(t, uint64(4), r.Records[len(r.Records)-1].Offset)

	require.NoError(t, c.WriteTxnMarker(ctx, "orders", 0, 7, 0, false)) // 7
	r = stable(t, c, "orders", 0)
	require.Equal(t, r.HighWatermark, r.LastStable, "nothing open")
	require.Equal(t, uint64(8), r.LastStable)
	require.Equal(t, []AbortedTxn{{ProducerID: 8, FirstOffset: 3}, {ProducerID: 7, FirstOffset: 5}}, r.Aborted)
	r = stable(t, c, "orders", 7)
	require.Equal(t, []AbortedTxn{{ProducerID: 7, FirstOffset: 5}}, r.Aborted, "a read past 8's abort marker (6) is told of 7's second transaction only")
	r = stable(t, c, "orders", 4)
	require.Equal(t, []AbortedTxn{{ProducerID: 8, FirstOffset: 3}, {ProducerID: 7, FirstOffset: 5}}, r.Aborted,
		"a read from inside 8's transaction is told of it")

	bounds, err := c.ReadStable("orders", 0, 0, 0)
	require.NoError(t, err)
	require.Empty(t, bounds.Records)
	require.Equal(t, uint64(8), bounds.LastStable)

	// Markers are read back as what they are.
	recs, err := c.ReadCommitted("orders", 0, 4, 1)
	require.NoError(t, err)
	id, ok := envelope.IdentityOf(recs[0].Payload)
	require.True(t, ok)
	require.Equal(t, envelope.CommitMarker, id.Marker)
	require.Equal(t, int64(7), id.Producer.ID)
}

// TestMarkersFence: a marker of a newer epoch fences the producer's older
// epoch — its records are refused, sequence 0 included — while the new
// epoch starts at 0; a marker of an older epoch than the partition knows
// is refused and stores nothing.
func TestMarkersFence(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	ctx := context.Background()

	_, err := prod.SendBatchTo(0, txnBatch(7, 0, 0, 2))
	require.NoError(t, err)
	// The coordinator aborts with the epoch bumped (a timed-out
	// transaction).
	require.NoError(t, c.WriteTxnMarker(ctx, "orders", 0, 7, 1, false))
	_, err = prod.SendBatchTo(0, txnBatch(7, 0, 2, 1))
	require.ErrorIs(t, err, ErrInvalidProducerEpoch, "the zombie is fenced")
	_, err = prod.SendBatchTo(0, txnBatch(7, 0, 0, 1))
	require.ErrorIs(t, err, ErrInvalidProducerEpoch, "at sequence 0 too")
	err = c.WriteTxnMarker(ctx, "orders", 0, 7, 0, true)
	require.ErrorIs(t, err, ErrInvalidProducerEpoch, "and so is its marker")
	_, err = prod.SendBatchTo(0, txnBatch(7, 2, 0, 1))
	require.NoError(t, err, "a newer epoch starts at 0")
	require.Len(t, values(t, c, "orders", 0), 4, "two records, the abort marker and the new epoch's record")
	r := stable(t, c, "orders", 0)
	require.Equal(t, uint64(3), r.LastStable)
	require.Equal(t, []AbortedTxn{{ProducerID: 7, FirstOffset: 0}}, r.Aborted)

	_, err = prod.SendBatchTo(0, append(txnBatch(7, 2, 1, 1), topic.Message{Payload: MarkerPayload(7, 2, true, 0)}))
	require.ErrorIs(t, err, ErrInvalidProducerBatch, "a marker is alone in its request")
	mixed := append(txnBatch(7, 2, 1, 1), idempotentBatch(7, 2, 2, 1)...)
	_, err = prod.SendBatchTo(0, mixed)
	require.ErrorIs(t, err, ErrInvalidProducerBatch, "transactional and not in one request")
}

// TestMarkersSurviveFailoverAndReopen: the open transaction and the
// aborted ones are rebuilt from the log by a new leader and after a
// restart, so the last stable offset and the aborted list are the same.
func TestMarkersSurviveFailoverAndReopen(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	ctx := context.Background()

	_, err := prod.SendBatchTo(0, txnBatch(7, 0, 0, 2)) // 0, 1
	require.NoError(t, err)
	require.NoError(t, c.WriteTxnMarker(ctx, "orders", 0, 7, 0, false)) // 2
	_, err = prod.SendBatchTo(0, txnBatch(7, 0, 2, 1))                  // 3, open
	require.NoError(t, err)
	want := stable(t, c, "orders", 0)
	require.Equal(t, uint64(3), want.LastStable)

	require.NoError(t, c.StopBroker(1))
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	got := stable(t, c, "orders", 0)
	require.Equal(t, want.LastStable, got.LastStable, "the new leader")
	require.Equal(t, want.Aborted, got.Aborted)
	_, err = prod.SendBatchTo(0, txnBatch(7, 0, 3, 1)) // 4, same transaction
	require.NoError(t, err, "the sequence goes on past the marker")

	c = reopen(t, c, root, 3)
	got = stable(t, c, "orders", 0)
	require.Equal(t, uint64(3), got.LastStable, "after a restart")
	require.Equal(t, []AbortedTxn{{ProducerID: 7, FirstOffset: 0}}, got.Aborted)
	require.NoError(t, c.WriteTxnMarker(ctx, "orders", 0, 7, 0, true))
	got = stable(t, c, "orders", 0)
	require.Equal(t, uint64(6), got.LastStable)
	require.Len(t, got.Records, 6)
}

// TestCrashSimMarker: a process killed before any step of a life that
// writes a transaction's records and then its abort marker — and a power
// loss right after — opens again with the partition telling the truth of
// its log: a marker that reached the log ends the transaction (the last
// stable offset is the high watermark, the transaction reported aborted),
// and without it the transaction is still open (the last stable offset
// stays at its first record, and a marker written now ends it).
func TestCrashSimMarker(t *testing.T) {
	prepared := filepath.Join(t.TempDir(), "cluster")
	c, err := Open(prepared)
	require.NoError(t, err)
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	require.NoError(t, c.CreateTopic("orders", 1, 1))
	_, err = NewProducer(c, "orders").Send(nil, []byte("before"))
	require.NoError(t, err)
	require.NoError(t, c.Close())

	var wrote, marked bool
	life := func(fsys durable.FS, root string) {
		cl, err := OpenWithOptions(root, Options{FS: fsys})
		if err != nil {
			return
		}
		defer cl.Close()
		if _, err := cl.StartBroker(1); err != nil {
			return
		}
		if _, err := NewProducer(cl, "orders").SendBatchTo(0, txnBatch(7, 0, 0, 2)); err != nil {
			return
		}
		wrote = true
		if cl.WriteTxnMarker(context.Background(), "orders", 0, 7, 0, false) == nil {
			marked = true
		}
	}
	steps := countSteps(t, prepared, life)
	require.True(t, marked)
	for n := 1; n <= steps+1; n++ {
		wrote, marked = false, false
		root, crash := killDuring(t, prepared, n, life)
		check := func(cl *Cluster, how string) {
			_, err := cl.StartBroker(1)
			require.NoError(t, err, how)
			r, err := cl.ReadStable("orders", 0, 0, 100)
			require.NoError(t, err, how)
			recs, err := cl.ReadCommitted("orders", 0, 0, 100)
			require.NoError(t, err, how)
			var hasMarker bool
			for _, rec := range recs {
				if id, ok := envelope.IdentityOf(rec.Payload); ok && id.Marker != envelope.NoMarker {
					hasMarker = true
				}
			}
			if marked {
				require.True(t, hasMarker, "%s: an acknowledged marker is kept", how)
			}
			switch {
			case hasMarker:
				require.Equal(t, r.HighWatermark, r.LastStable, "%s: the marker ended the transaction", how)
				require.Equal(t, []AbortedTxn{{ProducerID: 7, FirstOffset: 1}}, r.Aborted, how)
			case len(recs) > 1:
				require.Equal(t, uint64(1), r.LastStable, "%s: the transaction is open", how)
				require.NoError(t, cl.WriteTxnMarker(context.Background(), "orders", 0, 7, 0, false), how)
				r, err = cl.ReadStable("orders", 0, 0, 100)
				require.NoError(t, err, how)
				require.Equal(t, r.HighWatermark, r.LastStable, "%s: and a marker now ends it", how)
			default:
				require.False(t, wrote, "%s: acknowledged records are kept", how)
				require.Equal(t, r.HighWatermark, r.LastStable, how)
			}
		}
		lost := filepath.Join(crashInto(t, crash), "cluster")
		cl, err := Open(lost)
		require.NoError(t, err)
		check(cl, "power loss after step "+strconv.Itoa(n))
		require.NoError(t, cl.Close())
		cl, err = OpenWithOptions(root, Options{FS: crash})
		require.NoError(t, err)
		check(cl, "killed before step "+strconv.Itoa(n))
		require.NoError(t, cl.Close())
	}
}

// TestMarkersLastStableNotBelowLogStart: retention, bounded by the high
// watermark alone, may drop the first records of a transaction still
// open. The last stable offset is then the log start, as Kafka clamps its
// first unstable offset to it (Log.updateFirstUnstableOffset), never an
// offset below it: a read_committed reader that lists the latest offset
// must get one it can fetch, not an OFFSET_OUT_OF_RANGE for ever.
func TestMarkersLastStableNotBelowLogStart(t *testing.T) {
	c, _ := newCluster(t, 1)
	cfg := map[string]string{topic.SegmentBytesKey: "1024", topic.RetentionBytesKey: "2048"}
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 1, cfg))
	prod := NewProducer(c, "orders")
	_, err := prod.SendBatchTo(0, bigBatch(1, 0, 2, true)) // 0, 1: open
	require.NoError(t, err)
	for i := range 60 {
		_, err := prod.SendBatchTo(0, bigBatch(2, int32(i), 1, false))
		require.NoError(t, err)
	}
	_, err = c.EnforceRetention()
	require.NoError(t, err)
	r, err := c.ReadStable("orders", 0, 0, 0)
	require.NoError(t, err)
	require.Greater(t, r.LogStart, uint64(2), "the open transaction's records are gone")
	require.Equal(t, r.LogStart, r.LastStable, "the open transaction holds the last stable offset at the log start")

	require.NoError(t, c.WriteTxnMarker(context.Background(), "orders", 0, 1, 0, false))
	r, err = c.ReadStable("orders", 0, r.LogStart, 1000)
	require.NoError(t, err)
	require.Equal(t, r.HighWatermark, r.LastStable, "its marker frees it")
	require.Len(t, r.Records, int(r.HighWatermark-r.LogStart))
}

// TestMarkersStaleVersion: a partition applies a producer's versioned
// markers in rising version only. A coordinator paused after deciding an
// end (version 5), while another finished it, sends its marker late —
// after the producer has opened its next transaction in the partition.
// That marker is answered as written, stores nothing and leaves the new
// transaction open; the new transaction's own end (version 7) ends it.
// The versions survive a rebuild from the log.
func TestMarkersStaleVersion(t *testing.T) {
	c, root := newCluster(t, 1)
	require.NoError(t, c.CreateTopic("orders", 1, 1))
	prod := NewProducer(c, "orders")
	ctx := context.Background()

	_, err := prod.SendBatchTo(0, txnBatch(7, 0, 0, 1)) // 0
	require.NoError(t, err)
	require.NoError(t, c.WriteTxnMarkerAt(ctx, "orders", 0, 7, 0, true, 5)) // 1, by the new coordinator
	_, err = prod.SendBatchTo(0, txnBatch(7, 0, 1, 1))                      // 2: the next transaction
	require.NoError(t, err)
	require.NoError(t, c.WriteTxnMarkerAt(ctx, "orders", 0, 7, 0, true, 5), "the paused coordinator's marker")
	require.Len(t, values(t, c, "orders", 0), 3, "stored nothing")
	r := stable(t, c, "orders", 0)
	require.Equal(t, uint64(2), r.LastStable, "the next transaction is still open")

	c = reopen(t, c, root, 1)
	require.NoError(t, c.WriteTxnMarkerAt(ctx, "orders", 0, 7, 0, false, 4), "older still, after a rebuild")
	r = stable(t, c, "orders", 0)
	require.Equal(t, uint64(2), r.LastStable)
	require.NoError(t, c.WriteTxnMarkerAt(ctx, "orders", 0, 7, 0, false, 7))
	r = stable(t, c, "orders", 0)
	require.Equal(t, uint64(4), r.LastStable, "its own end")
	require.Equal(t, []AbortedTxn{{ProducerID: 7, FirstOffset: 2}}, r.Aborted)
}

// TestMarkersStaleAnsweredWithOvertakingMarker: a stale versioned marker
// is answered with the offset of the marker of the producer's highest
// version, the one that overtook it — not with that of an unversioned
// marker (WriteTxnMarker) written since, which the version rule does not
// concern.
func TestMarkersStaleAnsweredWithOvertakingMarker(t *testing.T) {
	tb := &producerTable{producers: map[int64]*producerEntry{}}
	p := envelope.Producer{ID: 7}
	tb.mark(p, envelope.CommitMarker, 5, 1, 0)
	tb.mark(p, envelope.AbortMarker, 0, 2, 0)
	v, err := tb.checkMarker(p, 5, 2, map[int64]envelope.Producer{})
	require.NoError(t, err)
	require.True(t, v.stale, "version 5's marker, at 1, is below the high watermark 2")
	require.Equal(t, uint64(1), v.run.firstOffset, "answered with version 5's marker")
}
