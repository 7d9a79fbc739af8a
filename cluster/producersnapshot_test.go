package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// smallSegments is a topic config whose segments roll every KiB.
var smallSegments = map[string]string{topic.SegmentBytesKey: "1024"}

// snapshotsOf lists the producer snapshots of broker id's replica.
func snapshotsOf(t *testing.T, root string, id int, topicName string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(replicaPath(root, id, topicName, 0)))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ProducerSnapshotSuffix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// bigBatch is n idempotent records of producer id from sequence seq,
// each of 100 bytes, transactional when txn.
func bigBatch(id int64, seq int32, n int, txn bool) []topic.Message {
	msgs := make([]topic.Message, n)
	for i := range msgs {
		r := envelope.Record{Value: make([]byte, 100), HasProducer: true, Transactional: txn,
			Producer: envelope.Producer{ID: id, Sequence: seq + int32(i)}}
		msgs[i] = topic.Message{Payload: envelope.Payload(r)}
	}
	return msgs
}

// seqSender returns a sender of bigBatch records to partition 0 through
// prod, which numbers each producer's records on from where its last
// batch ended, and those numbers, by producer id.
func seqSender(t *testing.T, prod *Producer) (map[int64]int32, func(id int64, n int, txn bool) []SendResult) {
	seq := map[int64]int32{}
	return seq, func(id int64, n int, txn bool) []SendResult {
		t.Helper()
		res, err := prod.SendBatchTo(0, bigBatch(id, seq[id], n, txn))
		require.NoError(t, err)
		seq[id] += int32(n)
		return res
	}
}

// TestProducerSnapshotsAtRoll: the leader snapshots its producers once
// per segment and keeps two; a restart reads the newest snapshot and the
// log past it, and knows every producer as it did — a retried batch is
// answered with its offsets, the open transaction holds the last stable
// offset, the aborted one is reported.
func TestProducerSnapshotsAtRoll(t *testing.T) {
	c, root := newCluster(t, 1)
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 1, smallSegments))
	prod := NewProducer(c, "orders")
	seq, send := seqSender(t, prod)
	send(1, 3, true)
	require.NoError(t, c.WriteTxnMarker(context.Background(), "orders", 0, 1, 0, false))
	for i := range 40 {
		send(int64(10+i%5), 2, false)
	}
	first := send(2, 2, true) // open
	last := send(3, 3, false)
	snaps := snapshotsOf(t, root, 1, "orders")
	require.Len(t, snaps, ProducerSnapshotsKept, "one per segment, the newest kept")
	want := stable(t, c, "orders", 0)
	require.Equal(t, first[0].Offset, want.LastStable)

	c = reopen(t, c, root, 1)
	prod = NewProducer(c, "orders")
	got := stable(t, c, "orders", 0)
	require.Equal(t, want.LastStable, got.LastStable)
	require.Equal(t, want.Aborted, got.Aborted)
	res, err := prod.SendBatchTo(0, bigBatch(3, seq[3]-3, 3, false))
	require.NoError(t, err, "a retry after the restart")
	require.Equal(t, offsetsOf(last), offsetsOf(res), "answered with its offsets")
	for id := range int64(5) {
		_, err := prod.SendBatchTo(0, bigBatch(10+id, seq[10+id], 1, false))
		require.NoError(t, err, "producer %d goes on where it was", 10+id)
	}
}

// TestProducerSnapshotsOutliveRetention: retention drops the segments a
// producer wrote in, and the producer is still known after a restart —
// its next batch is accepted, not refused as unknown — because the
// snapshot written at the roll kept its state.
func TestProducerSnapshotsOutliveRetention(t *testing.T) {
	c, root := newCluster(t, 1)
	cfg := map[string]string{topic.SegmentBytesKey: "1024", topic.RetentionBytesKey: "2048"}
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 1, cfg))
	prod := NewProducer(c, "orders")
	_, err := prod.SendBatchTo(0, bigBatch(1, 0, 2, false))
	require.NoError(t, err)
	for i := range 60 {
		_, err := prod.SendBatchTo(0, bigBatch(2, int32(i), 1, false))
		require.NoError(t, err)
	}
	_, err = c.EnforceRetention()
	require.NoError(t, err)
	start, _, err := c.Bounds("orders", 0)
	require.NoError(t, err)
	require.Greater(t, start, uint64(2), "producer 1's records are gone")

	c = reopen(t, c, root, 1)
	prod = NewProducer(c, "orders")
	_, err = prod.SendBatchTo(0, bigBatch(1, 2, 1, false))
	require.NoError(t, err, "producer 1 is still known: its sequence goes on")
	_, err = prod.SendBatchTo(0, bigBatch(1, 9, 1, false))
	require.ErrorIs(t, err, ErrOutOfOrderSequence, "and where it was is known")
}

// TestProducerSnapshotPassedOver: a snapshot that no longer describes the
// log — broken, or of records the log no longer has at its offset — is
// passed over (a broken one reported), and the table is read from an
// older one or the log instead, the same.
func TestProducerSnapshotPassedOver(t *testing.T) {
	c, root := newCluster(t, 1)
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 1, smallSegments))
	prod := NewProducer(c, "orders")
	for i := range 30 {
		_, err := prod.SendBatchTo(0, bigBatch(int64(1+i%3), int32(i/3)*2, 2, false))
		require.NoError(t, err)
	}
	require.NoError(t, c.Close()) // which snapshots the table too
	snaps := snapshotsOf(t, root, 1, "orders")
	require.NotEmpty(t, snaps)
	dir := filepath.Dir(replicaPath(root, 1, "orders", 0))
	for _, s := range snaps {
		path := filepath.Join(dir, s)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		data[len(data)-3] ^= 0xff
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
	var mu sync.Mutex
	var logged []string
	c = reopenWithLogf(t, c, root, 1, func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, strings.TrimSpace(fmt.Sprintf(format, args...)))
	})
	prod = NewProducer(c, "orders")
	res, err := prod.SendBatchTo(0, bigBatch(3, 18, 2, false))
	require.NoError(t, err, "producer 3's last batch sent again")
	require.Equal(t, []uint64{58, 59}, offsetsOf(res), "known from the log")
	mu.Lock()
	require.Contains(t, strings.Join(logged, "\n"), "checksum mismatch", "the broken snapshot is reported")
	mu.Unlock()

	// Another history: the table of this log, saved, then the log cut
	// back and written again with other records.
	ll, err := c.broker(1).replica("orders", 0, false)
	require.NoError(t, err)
	tb, err := buildProducerTable(ll, 0, nil)
	require.NoError(t, err)
	recs, err := ll.Read(ll.NextOffset()-1, 1)
	require.NoError(t, err)
	require.NoError(t, saveProducerSnapshot(durable.OS, ll, tb, recs[0], 0))
	require.NotNil(t, loadProducerSnapshot(durable.OS, ll, t.Logf), "it describes the log")
	require.NoError(t, ll.Truncate(ll.NextOffset()-1))
	_, err = ll.Append([]byte("another record"))
	require.NoError(t, err)
	require.Nil(t, loadProducerSnapshot(durable.OS, ll, t.Logf), "not after the log was cut and written again")
}

// TestCrashSimProducerSnapshot: a process killed before any step of a
// life that writes across segment rolls (so that it writes snapshots),
// and a power loss right after, opens again with every producer known
// as its log says: each batch acknowledged, sent again, is answered with
// its offsets and stored once.
func TestCrashSimProducerSnapshot(t *testing.T) {
	type acked struct {
		id      int64
		seq     int32
		offsets []uint64
	}
	// Batches i of the producers 1 and 2, taking turns: two 100-byte
	// records each, so a segment of 1 KiB holds about four.
	batch := func(cl *Cluster, i int) (acked, error) {
		id, seq := int64(1+i%2), int32(i/2)*2
		res, err := NewProducer(cl, "orders").SendBatchTo(0, bigBatch(id, seq, 2, false))
		return acked{id, seq, offsetsOf(res)}, err
	}
	// The prepared cluster has rolled once; the life below writes enough
	// to roll again, and so writes a snapshot and removes none or one.
	prepared := filepath.Join(t.TempDir(), "cluster")
	c, err := Open(prepared)
	require.NoError(t, err)
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 1, smallSegments))
	var before []acked
	for i := 0; len(snapshotsOf(t, prepared, 1, "orders")) == 0; i++ {
		a, err := batch(c, i)
		require.NoError(t, err)
		before = append(before, a)
		require.Less(t, i, 40)
	}
	require.NoError(t, c.Close())

	var got []acked
	life := func(fsys durable.FS, root string) {
		cl, err := OpenWithOptions(root, Options{FS: fsys})
		if err != nil {
			return
		}
		defer cl.Close()
		if _, err := cl.StartBroker(1); err != nil {
			return
		}
		for i := len(before); i < len(before)+5; i++ {
			a, err := batch(cl, i)
			if err != nil {
				return
			}
			got = append(got, a)
		}
	}
	steps := countSteps(t, prepared, life)
	require.Len(t, got, 5)
	t.Logf("%d steps", steps)
	for n := 1; n <= steps+1; n++ {
		got = nil
		root, crash := killDuring(t, prepared, n, life)
		got = append(slices.Clone(before), got...)
		check := func(cl *Cluster, how string) {
			prod := NewProducer(cl, "orders")
			before, err := cl.HighWatermark("orders", 0)
			require.NoError(t, err)
			require.GreaterOrEqual(t, before, uint64(2*len(got)), how)
			for i, a := range got {
				res, err := prod.SendBatchTo(0, bigBatch(a.id, a.seq, 2, false))
				later := 0
				for _, b := range got[i+1:] {
					if b.id == a.id {
						later++
					}
				}
				if later >= producerRunsKept-1 {
					// Perhaps older than the runs a partition keeps (a
					// batch written but not acknowledged may follow the
					// acknowledged ones): known written, its offsets
					// forgotten.
					if err != nil {
						require.ErrorIs(t, err, ErrDuplicateSequence, "%s: producer %d at %d", how, a.id, a.seq)
						continue
					}
				}
				require.NoError(t, err, "%s: producer %d at %d", how, a.id, a.seq)
				require.Equal(t, a.offsets, offsetsOf(res), "%s: producer %d at %d", how, a.id, a.seq)
			}
			after, err := cl.HighWatermark("orders", 0)
			require.NoError(t, err)
			require.Equal(t, before, after, "%s: nothing stored twice", how)
		}
		if len(got) > 0 {
			lost := filepath.Join(crashInto(t, crash), "cluster")
			cl, err := Open(lost)
			require.NoError(t, err)
			_, err = cl.StartBroker(1)
			require.NoError(t, err)
			check(cl, "power loss after step "+strconv.Itoa(n))
			require.NoError(t, cl.Close())
		}
		cl, err := OpenWithOptions(root, Options{FS: crash})
		require.NoError(t, err)
		_, err = cl.StartBroker(1)
		require.NoError(t, err)
		check(cl, "killed before step "+strconv.Itoa(n))
		require.NoError(t, cl.Close())
	}
}

// FuzzParseProducerSnapshot holds the snapshot decoder to the invariants
// of every decoder: no input panics, and a table it accepts encodes to a
// file that parses to the same table.
func FuzzParseProducerSnapshot(f *testing.F) {
	tb := &producerTable{end: 10, producers: map[int64]*producerEntry{
		7: {epoch: 1, lastWrite: 5, open: true, txnFirst: 4, markerVersion: 3, markerOffset: 2, runs: []producerRun{{firstSeq: 0, count: 3, firstOffset: 4, timestamp: 5}}},
	}, ended: []endedTxn{{producerID: 3, first: 1, marker: 2, aborted: true}}}
	good := encodeProducerSnapshot(tb, log.Record{Offset: 9, Payload: []byte("x")}, 0)
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte("PSPR\x00\x00\x00\x00\x01"))
	f.Add(append([]byte(nil), good[:len(good)-2]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, last, err := parseProducerSnapshot(data)
		if err != nil {
			return
		}
		again := encodeProducerSnapshot(tb, log.Record{}, -1<<63)
		tb2, _, err := parseProducerSnapshot(again)
		if err != nil {
			t.Fatalf("re-encoded snapshot refused: %v", err)
		}
		if len(tb2.producers) != len(tb.producers) || len(tb2.ended) != len(tb.ended) || tb2.end != tb.end {
			t.Fatalf("round trip changed the table: %+v vs %+v", tb, tb2)
		}
		_ = last
	})
}

// reopenWithLogf is reopen with logf told what the brokers report.
func reopenWithLogf(t *testing.T, c *Cluster, root string, n int, logf func(string, ...any)) *Cluster {
	t.Helper()
	require.NoError(t, c.Close())
	c2, err := OpenWithOptions(root, Options{Broker: BrokerOptions{Logf: logf}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c2.Close() })
	for id := 1; id <= n; id++ {
		_, err := c2.StartBroker(id)
		require.NoError(t, err)
	}
	return c2
}

// BenchmarkPartitionOpenWithProducers: a broker's restart and its first
// idempotent write to a partition whose log of 100,000 100-byte records
// (1 MiB segments) was written by 1,000 idempotent producers — read
// from the newest producer snapshot and the log past it — against the
// same for a log of plain records and a plain first write, in one run
// (the goal: at most 1.5×).
//
//	go test ./cluster -run '^$' -bench PartitionOpenWithProducers -benchtime 20x
func BenchmarkPartitionOpenWithProducers(b *testing.B) {
	const records, batch, producers = 100_000, 10, 1000
	for _, idem := range []bool{false, true} {
		name := "plain"
		if idem {
			name = "producers"
		}
		b.Run(name, func(b *testing.B) {
			root := b.TempDir()
			c, err := Open(root)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.StartBroker(1); err != nil {
				b.Fatal(err)
			}
			if err := c.CreateTopicWithConfig("t", 1, 1, map[string]string{topic.SegmentBytesKey: strconv.Itoa(1 << 20)}); err != nil {
				b.Fatal(err)
			}
			prod := NewProducer(c, "t")
			seqs := make([]int32, producers+1)
			for i := range records / batch {
				id := int64(i%producers) + 1
				msgs := bigBatch(id, seqs[id], batch, false)
				if !idem {
					msgs = make([]topic.Message, batch)
					for j := range msgs {
						msgs[j] = topic.Message{Payload: make([]byte, 100)}
					}
				}
				if _, err := prod.SendBatchTo(0, msgs); err != nil {
					b.Fatal(err)
				}
				seqs[id] += batch
			}
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				c, err := Open(root)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.StartBroker(1); err != nil {
					b.Fatal(err)
				}
				msgs := []topic.Message{{Payload: make([]byte, 100)}}
				if idem {
					msgs = bigBatch(1, seqs[1], 1, false)
					seqs[1]++
				}
				if _, err := NewProducer(c, "t").SendBatchTo(0, msgs); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := c.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/open")
		})
	}
}

// TestProducerSnapshotsOnFollowers: a follower snapshots its producers at
// each roll as its leader does, so that, failed over to, it knows every
// producer — a retried batch is answered with its offsets, the open
// transaction holds the last stable offset — having read only the log
// past its last snapshot.
func TestProducerSnapshotsOnFollowers(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 3, smallSegments))
	prod := NewProducer(c, "orders")
	seq, send := seqSender(t, prod)
	for i := range 30 {
		send(int64(1+i%3), 2, false)
	}
	open := send(9, 1, true)
	last := send(3, 2, false)
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	for _, id := range st.Active {
		require.NotEmpty(t, snapshotsOf(t, root, id, "orders"), "broker %d snapshots its replica", id)
	}

	require.NoError(t, c.StopBroker(st.Leader))
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	res, err := prod.SendBatchTo(0, bigBatch(3, seq[3]-2, 2, false))
	require.NoError(t, err, "the retry, to the new leader")
	require.Equal(t, offsetsOf(last), offsetsOf(res))
	r := stable(t, c, "orders", 0)
	require.Equal(t, open[0].Offset, r.LastStable, "the open transaction")
}

// TestProducerSnapshotsForgetSettledTransactions: a transaction committed
// below the high watermark no longer holds the last stable offset, and
// one ended below the log start is read by no one: neither is kept in the
// table a snapshot saves, on the leader or on a follower, whether or not
// a read_committed reader has asked for the last stable offset since. A
// table kept for as long as a follower runs would otherwise list every
// transaction ever ended, and write them all at each roll.
func TestProducerSnapshotsForgetSettledTransactions(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 3, smallSegments))
	prod := NewProducer(c, "orders")
	ctx := context.Background()
	for i := range 30 {
		_, err := prod.SendBatchTo(0, bigBatch(7, int32(2*i), 2, true))
		require.NoError(t, err)
		require.NoError(t, c.WriteTxnMarkerAt(ctx, "orders", 0, 7, 0, true, uint64(2*i+2)))
	}
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	dir := func(id int) string { return filepath.Dir(replicaPath(root, id, "orders", 0)) }
	for _, id := range st.Active {
		offs, err := producerSnapshots(durable.OS, dir(id))
		require.NoError(t, err)
		require.NotEmpty(t, offs, "broker %d snapshots its replica", id)
		data, err := os.ReadFile(filepath.Join(dir(id), ProducerSnapshotFileName(offs[0])))
		require.NoError(t, err)
		tb, _, err := parseProducerSnapshot(data)
		require.NoError(t, err)
		require.LessOrEqual(t, len(tb.ended), 2, "broker %d (leader %d): only the transactions not yet settled", id, st.Leader)
	}
}

// TestProducerSnapshotRefusesMarkerPastIt: a snapshot describes the log
// below its offset, so a producer's last versioned marker past it — which
// a stale marker would be answered with — makes it malformed, as a run or
// an open transaction past it does.
func TestProducerSnapshotRefusesMarkerPastIt(t *testing.T) {
	for _, at := range []uint64{9, 10, 1 << 40} {
		tb := &producerTable{end: 10, producers: map[int64]*producerEntry{
			7: {epoch: 1, lastWrite: 5, markerVersion: 3, markerOffset: at},
		}}
		_, _, err := parseProducerSnapshot(encodeProducerSnapshot(tb, log.Record{Offset: 9}, 0))
		if at < tb.end {
			require.NoError(t, err)
			continue
		}
		require.Error(t, err, "marker at %d", at)
	}
}
