package clustertest_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/server/nodebackend"
)

// kafkaNodes is a cluster of three nodes, each serving its broker over a
// Kafka listener of its own, as a cluster-mode server does.
//
// It runs on the wall clock, not in a synctest bubble: the Kafka listener
// serves on loopback TCP sockets (kafka.Server listens itself), and a
// goroutine waiting on a socket is never durably blocked, so the bubble's
// clock would stand still. clustertest's in-memory networks work on the
// wall clock as well; every wait here is bounded.
type kafkaNodes struct {
	c *clustertest.Cluster
	// addrs is each node's Kafka address, registered in the metadata.
	addrs map[int]string
	// stops stops each node's listener (once).
	stops map[int]func()
}

// groupHome is the cluster-mode rule of where consumer groups, and so
// transactions, are coordinated: the metadata group's leader (the
// server's groupCoordinator, without its hand-over window, which these
// tests do not exercise).
type groupHome struct{ n *clusternode.Node }

func (h groupHome) GroupCoordinator() (int, bool) {
	id := h.n.Controller()
	return id, id != 0 && id == h.n.ID()
}

// kafkaDirectory is a node as its Kafka listener sees it: its backend,
// with the node's registered Kafka addresses, and groupHome.
type kafkaDirectory struct {
	*nodebackend.Backend
	groupHome
}

var _ kafka.Directory = kafkaDirectory{}

// tickTransactions runs the transaction coordinator's timeouts and
// unfinished ends every 100 ms while node coordinates, until ctx ends: as
// the server's wiring does on the coordinating node.
func tickTransactions(ctx context.Context, node *clusternode.Node) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if _, here := (groupHome{node}).GroupCoordinator(); here {
				_ = node.Cluster().TickTransactions(ctx, now) // tried again at the next tick
			}
		}
	}
}

// freePort is a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// startKafkaNodes starts three nodes and a Kafka listener for each; the
// listeners stop before the nodes when the test ends.
func startKafkaNodes(t *testing.T) *kafkaNodes {
	t.Helper()
	k := &kafkaNodes{addrs: map[int]string{}, stops: map[int]func(){}}
	for id := 1; id <= 3; id++ {
		k.addrs[id] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	k.c = clustertest.Start(t, 3, clustertest.Options{FailoverAfter: failoverAfter,
		Configure: func(cfg *clusternode.Config) { cfg.KafkaAddr = k.addrs[cfg.ID] }})
	for _, id := range k.c.IDs() {
		node := k.c.Node(id)
		_, port, err := net.SplitHostPort(k.addrs[id])
		require.NoError(t, err)
		var p int
		_, err = fmt.Sscan(port, &p)
		require.NoError(t, err)
		srv, err := kafka.New(kafkaDirectory{nodebackend.New(node), groupHome{node}},
			kafka.Config{Host: "127.0.0.1", NodeID: id, Port: p, ReconcileEvery: 20 * time.Millisecond})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx) }()
		srv.Reconcile()
		ticked := make(chan struct{})
		go func() {
			defer close(ticked)
			tickTransactions(ctx, node)
		}()
		k.stops[id] = sync.OnceFunc(func() {
			cancel()
			<-ticked
			require.NoError(t, <-done)
		})
		t.Cleanup(k.stops[id])
		logtest.WaitFor(t, 20*time.Second, fmt.Sprintf("node %d's Kafka listener", id), func() (bool, string) {
			return srv.Addr(id) == k.addrs[id], srv.Addr(id)
		})
	}
	return k
}

// stop stops node id and its Kafka listener: to the others and to the
// clients, a process that stopped.
func (k *kafkaNodes) stop(id int) {
	k.stops[id]()
	k.c.Stop(id)
}

// client is a kgo client seeded with the given nodes only.
func (k *kafkaNodes) client(t *testing.T, seeds []int, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	var addrs []string
	for _, id := range seeds {
		addrs = append(addrs, k.addrs[id])
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }), kgo.MetadataMinAge(20 * time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// readToSentinels reads every partition of topicName from the start at
// the given isolation level until each has given its sentinel ("end"),
// and returns the values before them, by partition.
func (k *kafkaNodes) readToSentinels(t *testing.T, topicName string, partitions int, level kgo.IsolationLevel) map[int32][]string {
	t.Helper()
	return k.readToSentinelsVia(t, k.c.IDs(), topicName, partitions, level)
}

// readToSentinelsVia is readToSentinels with a client seeded with the
// given nodes.
func (k *kafkaNodes) readToSentinelsVia(t *testing.T, seeds []int, topicName string, partitions int, level kgo.IsolationLevel) map[int32][]string {
	t.Helper()
	cl := k.client(t, seeds, kgo.ConsumeTopics(topicName), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(level), kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := map[int32][]string{}
	ended := map[int32]bool{}
	for len(ended) < partitions {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "sentinels read in %d of %d partitions; read %v", len(ended), partitions, got)
		fs.EachRecord(func(r *kgo.Record) {
			require.False(t, r.Attrs.IsControl(), "a control record at %d/%d", r.Partition, r.Offset)
			if string(r.Value) == "end" {
				ended[r.Partition] = true
				return
			}
			got[r.Partition] = append(got[r.Partition], string(r.Value))
		})
	}
	return got
}

// TestClustertestKafkaTransactions: in cluster mode a kgo transactional
// producer, seeded with a node that does not coordinate, finds the
// transaction coordinator — the node that coordinates consumer groups,
// the metadata group's leader: every node's FindCoordinator names it for
// a transactional id as for a group, and a transactional InitProducerId
// sent elsewhere is NOT_COORDINATOR. It commits one transaction and
// aborts another over three partitions, each led by a node the placement chose; a
// read_committed consumer reads only the committed records, a
// read_uncommitted one both transactions' records and no marker.
func TestClustertestKafkaTransactions(t *testing.T) {
	const partitions = 3
	k := startKafkaNodes(t)
	require.NoError(t, k.c.Via(1).CreateTopic("orders", partitions, 3))
	k.c.AwaitReady()
	coordinator := k.c.Controller()
	require.NotZero(t, coordinator)
	other := 1 + coordinator%3

	probe := k.client(t, k.c.IDs())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range k.c.IDs() {
		for _, keyType := range []int8{0, 1} { // a group, a transactional id
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, keyType, []string{"orders-txn"}
			resp, err := req.RequestWith(ctx, probe.Broker(id))
			require.NoError(t, err)
			got := resp.Coordinators[0]
			require.Zero(t, got.ErrorCode, "node %d, key type %d: %v", id, keyType, kerr.ErrorForCode(got.ErrorCode))
			require.Equal(t, int32(coordinator), got.NodeID, "node %d names the coordinator, key type %d", id, keyType)
		}
	}
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version, init.TransactionalID, init.TransactionTimeoutMillis = 4, kmsg.StringPtr("orders-txn"), 10000
	ir, err := init.RequestWith(ctx, probe.Broker(other))
	require.NoError(t, err)
	require.Equal(t, kerr.NotCoordinator.Code, ir.ErrorCode, "node %d does not coordinate transactions", other)

	prod := k.client(t, []int{other}, kgo.TransactionalID("orders-txn"), kgo.TransactionTimeout(10*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	send := func(prefix string) {
		t.Helper()
		var recs []*kgo.Record
		for p := range int32(partitions) {
			for i := range 3 {
				recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Value: fmt.Appendf(nil, "%s-p%d-%d", prefix, p, i)})
			}
		}
		require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr(), prefix)
	}
	require.NoError(t, prod.BeginTransaction())
	send("committed")
	require.NoError(t, prod.EndTransaction(ctx, kgo.TryCommit))
	require.NoError(t, prod.BeginTransaction())
	send("aborted")
	require.NoError(t, prod.EndTransaction(ctx, kgo.TryAbort))

	plain := k.client(t, []int{other}, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(partitions) {
		require.NoError(t, plain.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("end")}).FirstErr())
	}
	committed := k.readToSentinels(t, "orders", partitions, kgo.ReadCommitted())
	uncommitted := k.readToSentinels(t, "orders", partitions, kgo.ReadUncommitted())
	for p := range int32(partitions) {
		var c, a []string
		for i := range 3 {
			c = append(c, fmt.Sprintf("committed-p%d-%d", p, i))
			a = append(a, fmt.Sprintf("aborted-p%d-%d", p, i))
		}
		require.Equal(t, c, committed[p], "partition %d read committed", p)
		require.Equal(t, append(c, a...), uncommitted[p], "partition %d read uncommitted", p)
	}

	k.awaitTxnState(t, coordinator, "orders-txn", cluster.TxnCompleteAbort)
}

// awaitTxnState waits until node via holds transactional id's
// transaction in state; its markers may be readable a moment before the
// state is saved complete.
func (k *kafkaNodes) awaitTxnState(t *testing.T, via int, id string, state cluster.TxnState) {
	t.Helper()
	logtest.WaitFor(t, 10*time.Second, fmt.Sprintf("transaction %s %s at node %d", id, state, via), func() (bool, string) {
		txns, err := k.c.Via(via).Transactions()
		if err != nil {
			return false, err.Error()
		}
		for _, tx := range txns {
			if tx.ID == id {
				return tx.State == state, string(tx.State)
			}
		}
		return false, id + " unknown"
	})
}

// TestClustertestKafkaTransactionCoordinatorStops: a transaction's state
// lives in the replicated metadata, not in the coordinating process.
// Between a kgo producer's writes into a transaction and its commit, the
// coordinator's node stops; the metadata group's new leader coordinates
// groups and transactions from then on, the producer finds it, and its
// commit there writes the commit markers into every partition the
// transaction wrote to (through their leaders, the stopped node's failed
// over). A read_committed consumer reads the committed records; the
// transaction before, aborted, stays unread.
func TestClustertestKafkaTransactionCoordinatorStops(t *testing.T) {
	const partitions = 3
	k := startKafkaNodes(t)
	require.NoError(t, k.c.Via(1).CreateTopic("orders", partitions, 3))
	k.c.AwaitReady()
	old := k.c.Controller()
	require.NotZero(t, old)
	seed := 1 + old%3
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	prod := k.client(t, []int{seed}, kgo.TransactionalID("orders-txn"), kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	send := func(prefix string) {
		t.Helper()
		var recs []*kgo.Record
		for p := range int32(partitions) {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Value: fmt.Appendf(nil, "%s-p%d", prefix, p)})
		}
		require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr(), prefix)
	}
	require.NoError(t, prod.BeginTransaction())
	send("aborted")
	require.NoError(t, prod.EndTransaction(ctx, kgo.TryAbort))
	require.NoError(t, prod.BeginTransaction())
	send("committed")

	t.Logf("stopping node %d, the coordinator", old)
	k.stop(old)
	k.c.Await("a new metadata leader", func() (bool, string) {
		id := k.c.Controller()
		return id != 0 && id != old, fmt.Sprintf("controller %d", id)
	})
	coordinator := k.c.Controller()
	require.NoError(t, prod.EndTransaction(ctx, kgo.TryCommit), "committed through node %d, the new coordinator", coordinator)

	plain := k.client(t, []int{seed}, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(partitions) {
		require.NoError(t, plain.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("end")}).FirstErr())
	}
	running := k.c.Running()
	committed := k.readToSentinelsVia(t, running, "orders", partitions, kgo.ReadCommitted())
	for p := range int32(partitions) {
		require.Equal(t, []string{fmt.Sprintf("committed-p%d", p)}, committed[p], "partition %d read committed", p)
	}
	k.awaitTxnState(t, coordinator, "orders-txn", cluster.TxnCompleteCommit) // the new coordinator finished the commit
}
