package server

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaWiringTransactionTimeout: the server runs the transaction
// coordinator's timeouts on its own. A kgo transactional producer that
// writes into a transaction and goes away (closed without ending it) is
// aborted at its timeout, so that a read_committed reader, held at the
// open transaction's first offset until then, reads on: the plain record
// written after it, never the abandoned ones.
func TestKafkaWiringTransactionTimeout(t *testing.T) {
	const timeout = time.Second
	srv, _, _ := startKafkaServer(t, "orders", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	rec := func(v string) *kgo.Record { return &kgo.Record{Topic: "orders", Partition: 0, Value: []byte(v)} }

	started := time.Now() // before the coordinator's clock for the transaction starts
	gone, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr(1)), kgo.TransactionalID("gone"), kgo.TransactionTimeout(timeout))
	require.NoError(t, err)
	require.NoError(t, gone.BeginTransaction())
	require.NoError(t, gone.ProduceSync(ctx, rec("gone-1"), rec("gone-2")).FirstErr())
	begun := time.Now()
	gone.Close() // no EndTransaction: a producer that went away
	plain, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr(1)))
	require.NoError(t, err)
	defer plain.Close()
	require.NoError(t, plain.ProduceSync(ctx, rec("after")).FirstErr())

	reader, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr(1)),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	require.NoError(t, err)
	defer reader.Close()
	wait, stop := context.WithTimeout(ctx, timeout+8*time.Second)
	defer stop()
	var read []string
	for len(read) == 0 {
		fs := reader.PollFetches(wait)
		require.NoError(t, wait.Err(), "read_committed still held %v after a transaction of timeout %v went away: nothing aborted it", time.Since(begun).Round(time.Millisecond), timeout)
		for _, r := range fs.Records() {
			read = append(read, string(r.Value))
		}
	}
	require.Equal(t, []string{"after"}, read, "the abandoned records are never read committed")
	require.GreaterOrEqual(t, time.Since(started), timeout, "read_committed stops at the open transaction's first offset until it is aborted")
	t.Logf("read_committed held %v", time.Since(begun).Round(time.Millisecond))
}
