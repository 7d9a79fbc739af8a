package kafka_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
)

// saramaConfig is a sarama configuration for a loopback test: a recent
// protocol version, short retries, every wait bounded.
func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "pystream-test"
	cfg.Net.DialTimeout, cfg.Net.ReadTimeout, cfg.Net.WriteTimeout = 2*time.Second, 5*time.Second, 5*time.Second
	cfg.Metadata.Retry.Max, cfg.Metadata.Retry.Backoff = 5, 20*time.Millisecond
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Retry.Backoff = 20 * time.Millisecond
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	return cfg
}

// saramaClient is a sarama client of every broker's listener.
func (f *fixture) saramaClient(t *testing.T) sarama.Client {
	t.Helper()
	var seeds []string
	for _, b := range f.c.Brokers() {
		if a := f.srv.Addr(b.ID); a != "" {
			seeds = append(seeds, a)
		}
	}
	cl, err := sarama.NewClient(seeds, saramaConfig())
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// TestKafkaSaramaProduceConsume: sarama, a second implementation of the
// protocol, produces records with keys and headers to each partition of
// a replicated topic and consumes every partition from the oldest offset,
// getting each record back whole; its offset manager commits without a
// group, into PyStream's offset store.
func TestKafkaSaramaProduceConsume(t *testing.T) {
	f := start(t, 3, 2, 3)
	cl := f.saramaClient(t)
	prod, err := sarama.NewSyncProducerFromClient(cl)
	require.NoError(t, err)
	defer func() { _ = prod.Close() }()
	const perPartition = 3
	for p := int32(0); p < 2; p++ {
		for i := 0; i < perPartition; i++ {
			key := fmt.Sprintf("p%d-%d", p, i)
			part, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "events", Partition: p,
				Key: sarama.StringEncoder(key), Value: sarama.StringEncoder("value of " + key),
				Headers: []sarama.RecordHeader{{Key: []byte("h"), Value: []byte(key)}}})
			require.NoError(t, err)
			require.Equal(t, p, part)
			require.Equal(t, int64(i), off, "one offset per record")
		}
	}

	cons, err := sarama.NewConsumerFromClient(cl)
	require.NoError(t, err)
	defer func() { _ = cons.Close() }()
	for p := int32(0); p < 2; p++ {
		pc, err := cons.ConsumePartition("events", p, sarama.OffsetOldest)
		require.NoError(t, err)
		for i := 0; i < perPartition; i++ {
			key := fmt.Sprintf("p%d-%d", p, i)
			select {
			case m := <-pc.Messages():
				require.Equal(t, int64(i), m.Offset)
				require.Equal(t, key, string(m.Key))
				require.Equal(t, "value of "+key, string(m.Value))
				require.Len(t, m.Headers, 1)
				require.Equal(t, key, string(m.Headers[0].Value))
			case err := <-pc.Errors():
				t.Fatalf("consume %d: %v", p, err)
			case <-time.After(10 * time.Second):
				t.Fatalf("partition %d: record %d not consumed", p, i)
			}
		}
		require.NoError(t, pc.Close())
	}

	om, err := sarama.NewOffsetManagerFromClient("billing", cl)
	require.NoError(t, err)
	pom, err := om.ManagePartition("events", 1)
	require.NoError(t, err)
	pom.MarkOffset(2, "")
	om.Commit()
	// Without auto-commit, closing the manager first releases the
	// partition's manager, whose Close then returns the commit's errors.
	pom.AsyncClose()
	require.NoError(t, om.Close())
	require.NoError(t, pom.Close())
	store, err := f.c.OffsetStore()
	require.NoError(t, err)
	off, ok, err := store.Load("billing", "events", 1)
	require.NoError(t, err)
	require.True(t, ok, "sarama's commit reached PyStream's offset store")
	require.Equal(t, uint64(2), off)
}
