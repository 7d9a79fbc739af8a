package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// idempotentBatch is n records of producer id at epoch, from sequence
// seq, as a Kafka producer's batch reaches the cluster.
func idempotentBatch(id int64, epoch int16, seq int32, n int) []topic.Message {
	msgs := make([]topic.Message, n)
	for i := range msgs {
		r := envelope.Record{Value: []byte{byte(seq) + byte(i)}, HasProducer: true,
			Producer: envelope.Producer{ID: id, Epoch: epoch, Sequence: seq + int32(i)}}
		msgs[i] = topic.Message{Payload: envelope.Payload(r)}
	}
	return msgs
}

func offsetsOf(res []SendResult) []uint64 {
	out := make([]uint64, len(res))
	for i, r := range res {
		out[i] = r.Offset
	}
	return out
}

// TestProducersRules: a batch sent again is answered with the offsets of
// its first write and stored once; a gap, an old epoch, an unknown
// producer not starting at 0 and a request mixing producers are refused
// with their own errors and store nothing; a new epoch starts at 0.
func TestProducersRules(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	send := func(msgs []topic.Message) ([]uint64, error) {
		res, err := prod.SendBatchTo(0, msgs)
		return offsetsOf(res), err
	}

	got, err := send(idempotentBatch(7, 0, 0, 3))
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1, 2}, got)
	got, err = send(idempotentBatch(7, 0, 0, 3))
	require.NoError(t, err, "sent again")
	require.Equal(t, []uint64{0, 1, 2}, got, "answered with the first write's offsets")
	got, err = send(idempotentBatch(7, 0, 1, 2))
	require.NoError(t, err, "a part of a written batch")
	require.Equal(t, []uint64{1, 2}, got)

	_, err = prod.Send(nil, []byte("plain")) // offset 3: no producer
	require.NoError(t, err)
	got, err = send(idempotentBatch(7, 0, 3, 2))
	require.NoError(t, err)
	require.Equal(t, []uint64{4, 5}, got)

	refusals := []struct {
		name string
		msgs []topic.Message
		want error
	}{
		{"gap", idempotentBatch(7, 0, 9, 1), ErrOutOfOrderSequence},
		{"new epoch not at 0", idempotentBatch(7, 1, 5, 1), ErrOutOfOrderSequence},
		{"unknown producer not at 0", idempotentBatch(8, 0, 4, 1), ErrUnknownProducer},
		{"two producers in one request", append(idempotentBatch(7, 0, 5, 1), idempotentBatch(9, 0, 0, 1)...), ErrInvalidProducerBatch},
		{"not consecutive", append(idempotentBatch(7, 0, 5, 1), idempotentBatch(7, 0, 7, 1)...), ErrInvalidProducerBatch},
		{"with and without a producer", append(idempotentBatch(7, 0, 5, 1), topic.Message{Payload: []byte("x")}), ErrInvalidProducerBatch},
	}
	for _, r := range refusals {
		_, err := send(r.msgs)
		require.ErrorIs(t, err, r.want, r.name)
		var pe *ProducerError
		require.ErrorAs(t, err, &pe, r.name)
		require.Equal(t, "orders", pe.Topic, r.name)
	}
	require.Equal(t, []string{"\x00", "\x01", "\x02", "plain", "\x03", "\x04"}, values(t, c, "orders", 0), "refusals stored nothing")

	got, err = send(idempotentBatch(7, 1, 0, 1))
	require.NoError(t, err, "a new epoch starts at 0")
	require.Equal(t, []uint64{6}, got)
	_, err = send(idempotentBatch(7, 0, 5, 1))
	require.ErrorIs(t, err, ErrInvalidProducerEpoch, "the old epoch is fenced")
}

// TestProducersDuplicateOlderThanKept: a batch older than the runs a
// producer's entry keeps is refused as a duplicate (Kafka's
// DUPLICATE_SEQUENCE_NUMBER, which a client counts written), never
// written again.
func TestProducersDuplicateOlderThanKept(t *testing.T) {
	c, _ := newCluster(t, 1)
	require.NoError(t, c.CreateTopic("orders", 1, 1))
	prod := NewProducer(c, "orders")
	for seq := range int32(producerRunsKept + 2) {
		_, err := prod.SendBatchTo(0, idempotentBatch(7, 0, seq, 1))
		require.NoError(t, err)
		_, err = prod.Send(nil, []byte("between")) // so that runs do not merge
		require.NoError(t, err)
	}
	_, err := prod.SendBatchTo(0, idempotentBatch(7, 0, 0, 1))
	require.ErrorIs(t, err, ErrDuplicateSequence)
	res, err := prod.SendBatchTo(0, idempotentBatch(7, 0, producerRunsKept+1, 1))
	require.NoError(t, err, "a kept run is still answered")
	require.Equal(t, uint64(2*(producerRunsKept+1)), res[0].Offset)
}

// TestProducersSurviveFailoverAndReopen: the producer identity travels
// with the records, so the new leader after a failover, and the cluster
// opened again, answer a batch sent again with its first offsets.
func TestProducersSurviveFailoverAndReopen(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	_, err := prod.SendBatchTo(0, idempotentBatch(7, 0, 0, 2))
	require.NoError(t, err)

	require.NoError(t, c.StopBroker(1))
	fo, err := c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 2, fo.NewLeaderBrokerID)
	res, err := prod.SendBatchTo(0, idempotentBatch(7, 0, 0, 2))
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1}, offsetsOf(res), "the new leader knows the batch")
	_, err = prod.SendBatchTo(0, idempotentBatch(7, 0, 5, 1))
	require.ErrorIs(t, err, ErrOutOfOrderSequence, "and where the producer is")
	res, err = prod.SendBatchTo(0, idempotentBatch(7, 0, 2, 1))
	require.NoError(t, err)
	require.Equal(t, []uint64{2}, offsetsOf(res))

	// Leadership back to broker 1, whose table was of its own log as it
	// led before: it must read what broker 2 wrote since.
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	_, err = c.RecoverReplica("orders", 0, 1)
	require.NoError(t, err)
	_, err = c.MoveLeader("orders", 0, 1)
	require.NoError(t, err)
	res, err = prod.SendBatchTo(0, idempotentBatch(7, 0, 2, 1))
	require.NoError(t, err)
	require.Equal(t, []uint64{2}, offsetsOf(res), "broker 1 knows the batch broker 2 wrote")

	c = reopen(t, c, root, 3)
	prod = NewProducer(c, "orders")
	res, err = prod.SendBatchTo(0, idempotentBatch(7, 0, 0, 2))
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1}, offsetsOf(res), "after a restart too")
	res, err = prod.SendBatchTo(0, idempotentBatch(7, 0, 3, 1))
	require.NoError(t, err)
	require.Equal(t, []uint64{3}, offsetsOf(res))
	require.Len(t, values(t, c, "orders", 0), 4)
}

// TestProducersDuplicateOfUnreplicatedWrite: a batch whose first write
// reached only the leader is not acknowledged when sent again until every
// active replica holds it — then it is, with its first offsets, and it is
// stored once.
func TestProducersDuplicateOfUnreplicatedWrite(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	require.NoError(t, c.StopBroker(2))
	require.NoError(t, c.StopBroker(3))
	_, err := prod.SendBatchTo(0, idempotentBatch(7, 0, 0, 1))
	var re *ReplicationError
	require.ErrorAs(t, err, &re, "the followers did not take it")

	_, err = prod.SendBatchTo(0, idempotentBatch(7, 0, 0, 1))
	var dn *DuplicateNotCommittedError
	require.ErrorAs(t, err, &dn, "sent again: written, not yet everywhere")
	require.ErrorIs(t, err, ErrBrokerUnavailable, "retriable")

	for _, id := range []int{2, 3} {
		_, err = c.StartBroker(id)
		require.NoError(t, err)
		_, err = c.CatchUp("orders", 0, id)
		require.NoError(t, err)
	}
	res, err := prod.SendBatchTo(0, idempotentBatch(7, 0, 0, 1))
	require.NoError(t, err)
	require.Equal(t, []uint64{0}, offsetsOf(res), "answered once every replica holds it")
	require.Len(t, values(t, c, "orders", 0), 1)
}

// values reads a partition up to its high watermark and returns each
// record's value.
func values(t *testing.T, c *Cluster, topicName string, p int) []string {
	t.Helper()
	var out []string
	for _, pl := range payloads(t, c, topicName, p) {
		out = append(out, string(envelope.Decode([]byte(pl)).Value))
	}
	return out
}

// BenchmarkProducerTableRebuild is what a new leader (or a restarted
// broker) pays before its first write of an idempotent producer's batch:
// reading its whole log to learn its producers, against the same log
// written by plain producers, paired in one run. The log holds 100,000
// 100-byte records, in batches of 10, from 1,000 producers.
//
//	go test ./cluster -run '^$' -bench ProducerTableRebuild -benchtime 5x
func BenchmarkProducerTableRebuild(b *testing.B) {
	const records, batch, producers = 100_000, 10, 1000
	for _, idem := range []bool{true, false} {
		name := "plain"
		if idem {
			name = "idempotent"
		}
		b.Run(name, func(b *testing.B) {
			c, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if _, err := c.StartBroker(1); err != nil {
				b.Fatal(err)
			}
			if err := c.CreateTopic("t", 1, 1); err != nil {
				b.Fatal(err)
			}
			prod := NewProducer(c, "t")
			seqs := make([]int32, producers)
			for i := range records / batch {
				id := i % producers
				msgs := make([]topic.Message, batch)
				for j := range msgs {
					r := envelope.Record{Value: make([]byte, 100)}
					if idem {
						r.HasProducer, r.Producer = true, envelope.Producer{ID: int64(id), Sequence: seqs[id] + int32(j)}
					}
					msgs[j] = topic.Message{Payload: envelope.Payload(r)}
				}
				if _, err := prod.SendBatchTo(0, msgs); err != nil {
					b.Fatal(err)
				}
				seqs[id] += batch
			}
			ll, err := c.broker(1).replica("t", 0, false)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				t, err := buildProducerTable(ll, 0, nil)
				if err != nil {
					b.Fatal(err)
				}
				if idem && len(t.producers) != producers {
					b.Fatalf("%d producers, want %d", len(t.producers), producers)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/rebuild")
		})
	}
}
