package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka transactions in a cluster of processes: the node that
// coordinates consumer groups (the metadata group's leader) coordinates
// transactions, every node's FindCoordinator names it for a
// transactional id, and the transactions' state lives in the replicated
// metadata. A kgo producer writes into a transaction; its coordinator's
// process is SIGKILLed before the commit; the producer commits through
// the new leader, which writes the commit markers into every partition
// (the killed node's partitions once they failed over). A transaction
// whose producer went away is aborted at its timeout by the coordinating
// node's own ticks. A read_committed consumer reads both committed
// transactions and none of the abandoned one's records, and is not held
// by it past its timeout.
func TestClusterKafkaTransactionCoordinatorKilled(t *testing.T) {
	const partitions, goneTimeout = 3, 2 * time.Second
	began := time.Now()
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter})
	t.Logf("cluster up in %v", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", partitions, 3)
	leader := c.controller(ctx, c.ids(), 30*time.Second)
	c.awaitCoordinator(ctx, t, c.ids(), leader)
	for _, id := range c.ids() {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, 1, []string{"orders-txn"}
		got := c.kafkaRequest(ctx, t, id, req).(*kmsg.FindCoordinatorResponse).Coordinators[0]
		require.Zero(t, got.ErrorCode, "node %d", id)
		require.Equal(t, int32(leader), got.NodeID, "node %d names the group coordinator for a transactional id", id)
	}

	other := c.ids(leader)[0]
	prod := c.kafkaClient(t, []int{other}, kgo.TransactionalID("orders-txn"), kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	send := func(cl *kgo.Client, prefix string) {
		t.Helper()
		var recs []*kgo.Record
		for p := range int32(partitions) {
			recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, "%s-p%d", prefix, p)})
		}
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr(), prefix)
	}
	require.NoError(t, prod.BeginTransaction())
	send(prod, "first")
	require.NoError(t, prod.EndTransaction(ctx, kgo.TryCommit))
	require.NoError(t, prod.BeginTransaction())
	send(prod, "second")

	t.Logf("SIGKILL node %d, the coordinator, with a transaction open", leader)
	c.kill(leader)
	next := c.controller(ctx, c.ids(leader), 30*time.Second)
	t.Logf("node %d leads, %v after the start", next, time.Since(began).Round(time.Millisecond))
	require.NoError(t, prod.EndTransaction(ctx, kgo.TryCommit), "committed through node %d", next)

	gone := c.kafkaClient(t, []int{other}, kgo.TransactionalID("gone"), kgo.TransactionTimeout(goneTimeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, gone.BeginTransaction())
	send(gone, "gone")
	abandoned := time.Now()
	gone.Close() // no EndTransaction: a producer that went away
	plain := c.kafkaClient(t, []int{other}, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	send(plain, "end")

	cons := c.kafkaClient(t, c.ids(leader), kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
	defer rcancel()
	read := map[int32][]string{}
	ended := map[int32]bool{}
	for len(ended) < partitions {
		fs := cons.PollFetches(rctx)
		require.NoError(t, rctx.Err(), "read committed %v, %v after the producer went away; ends read in %d of %d partitions",
			read, time.Since(abandoned).Round(time.Millisecond), len(ended), partitions)
		fs.EachRecord(func(r *kgo.Record) {
			if v := string(r.Value); v == fmt.Sprintf("end-p%d", r.Partition) {
				ended[r.Partition] = true
			} else {
				read[r.Partition] = append(read[r.Partition], v)
			}
		})
	}
	held := time.Since(abandoned)
	t.Logf("read_committed read on %v after the producer went away", held.Round(time.Millisecond))
	require.Less(t, held, goneTimeout+6*time.Second, "the coordinating node aborts the abandoned transaction about its timeout after it began")
	for p := range int32(partitions) {
		require.Equal(t, []string{fmt.Sprintf("first-p%d", p), fmt.Sprintf("second-p%d", p)}, read[p], "partition %d read committed", p)
	}
}
