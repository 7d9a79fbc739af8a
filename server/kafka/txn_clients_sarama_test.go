package kafka_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
)

// saramaReadToSentinel consumes events/p from the oldest offset at the
// given isolation level until the sentinel, and returns the values
// before it.
func (f *fixture) saramaReadToSentinel(t *testing.T, p int32, level sarama.IsolationLevel) []string {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.IsolationLevel = level
	cons, err := sarama.NewConsumer(f.seeds(), cfg)
	require.NoError(t, err)
	defer func() { _ = cons.Close() }()
	pc, err := cons.ConsumePartition("events", p, sarama.OffsetOldest)
	require.NoError(t, err)
	defer func() { _ = pc.Close() }()
	deadline := time.After(15 * time.Second)
	var got []string
	for {
		select {
		case m := <-pc.Messages():
			if string(m.Value) == sentinel {
				return got
			}
			got = append(got, string(m.Value))
		case err := <-pc.Errors():
			t.Fatalf("consume events/%d: %v", p, err)
		case <-deadline:
			t.Fatalf("events/%d: no sentinel after 15 s; read %v", p, got)
		}
	}
}

// TestKafkaTxnSarama: sarama's transactional producer (Transaction.ID,
// which needs Idempotent, one request in flight and acks=all) commits one
// transaction and aborts another, over two partitions; a read_committed
// sarama consumer (Consumer.IsolationLevel) reads the committed records
// only, a read_uncommitted one both transactions' records.
func TestKafkaTxnSarama(t *testing.T) {
	f := start(t, 3, 2, 3)
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Transaction.ID = "sarama-txn"
	cfg.Producer.Transaction.Timeout = 10 * time.Second
	cfg.Producer.Transaction.Retry.Backoff = 20 * time.Millisecond
	prod, err := sarama.NewSyncProducer(f.seeds(), cfg)
	require.NoError(t, err, "sarama's transactional producer starts (InitProducerId with its transactional id)")
	defer func() { _ = prod.Close() }()
	require.True(t, prod.IsTransactional())

	send := func(prefix string) {
		t.Helper()
		for i := range 3 {
			for p := range int32(2) {
				_, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "events", Partition: p,
					Value: sarama.StringEncoder(fmt.Sprintf("%s-p%d-%d", prefix, p, i))})
				require.NoError(t, err, "%s: send to partition %d", prefix, p)
			}
		}
	}
	require.NoError(t, prod.BeginTxn())
	send("committed")
	require.NoError(t, prod.CommitTxn())
	require.NoError(t, prod.BeginTxn())
	send("aborted")
	require.NoError(t, prod.AbortTxn())
	f.writeSentinels(t, "events", 2)

	for p := range int32(2) {
		var committed, aborted []string
		for i := range 3 {
			committed = append(committed, fmt.Sprintf("committed-p%d-%d", p, i))
			aborted = append(aborted, fmt.Sprintf("aborted-p%d-%d", p, i))
		}
		require.Equal(t, committed, f.saramaReadToSentinel(t, p, sarama.ReadCommitted), "partition %d read committed", p)
		require.Equal(t, append(committed, aborted...), f.saramaReadToSentinel(t, p, sarama.ReadUncommitted),
			"partition %d read uncommitted: every data record, no marker", p)
	}
}
