package server

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
)

// txnState is transactional id's state on c, "" when it has none.
func txnState(t *testing.T, c *cluster.Cluster, id string) (cluster.Transaction, bool) {
	t.Helper()
	all, err := c.Transactions()
	require.NoError(t, err)
	for _, x := range all {
		if x.ID == id {
			return x, true
		}
	}
	return cluster.Transaction{}, false
}

// The embedded server runs the transaction coordinator's pass every
// TxnTickInterval: a transaction whose producer went away is aborted once
// past its timeout, its epoch bumped. Time is synctest's.
func TestTransactionsEmbeddedTickAbortsTimedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, _ := newTestServer(t, Defaults())
		c := s.local.Cluster
		pid, epoch, err := c.InitTransactions(ctx, "tx", 2*time.Second, -1, -1)
		require.NoError(t, err)
		require.NoError(t, c.AddOffsetsToTxn(ctx, "tx", pid, epoch, "billing"))
		time.Sleep(2 * time.Second)
		synctest.Wait()
		got, _ := txnState(t, c, "tx")
		require.Equal(t, cluster.TxnOngoing, got.State, "not past its timeout")
		time.Sleep(TxnTickInterval)
		synctest.Wait()
		got, _ = txnState(t, c, "tx")
		require.Equal(t, cluster.TxnCompleteAbort, got.State)
		require.Equal(t, epoch+1, got.Epoch)
	})
}

// In cluster mode the pass runs on the node that coordinates (the
// metadata group's leader), on the states in the replicated metadata: a
// transaction left open by the coordinator that stopped is aborted by the
// next one once past its timeout.
func TestTransactionsClusterTickOnCoordinator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 3)
		for id := 1; id <= 3; id++ {
			c.start(id, nil, false)
		}
		res := c.awaitNodes(c.nodes[1], "a controller and three registered nodes", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller != 0 && len(res.Nodes) == 3
		})
		c.awaitReady()
		first := res.Controller
		coord := c.nodes[first].srv.node.Cluster()
		pid, epoch, err := coord.InitTransactions(ctx, "tx", 10*time.Second, -1, -1)
		require.NoError(t, err)
		require.NoError(t, coord.AddOffsetsToTxn(ctx, "tx", pid, epoch, "billing"))
		c.stop(first)

		var next int
		c.await("another coordinator", func() (bool, string) {
			for id, r := range c.nodes {
				if _, here := r.srv.groupCoordinator(); here {
					next = id
					return true, ""
				}
			}
			return false, "none coordinates"
		})
		now := c.nodes[next].srv.node.Cluster()
		got, ok := txnState(t, now, "tx")
		require.True(t, ok, "the state is in the replicated metadata")
		require.Equal(t, cluster.TxnOngoing, got.State)
		c.await("the open transaction aborted", func() (bool, string) {
			got, _ := txnState(t, now, "tx")
			return got.State == cluster.TxnCompleteAbort, fmt.Sprintf("%s at epoch %d", got.State, got.Epoch)
		})
		got, _ = txnState(t, now, "tx")
		require.Equal(t, epoch+1, got.Epoch, "fenced")
		err = now.EndTxn(ctx, "tx", pid, epoch, true)
		require.ErrorIs(t, err, cluster.ErrProducerFenced)
	})
}

// In cluster mode a transaction's end writes its markers through each
// partition's leader, wherever it runs, and its offsets become the
// group's committed offsets in the replicated metadata, read back through
// any node.
func TestTransactionsClusterCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 3)
		for id := 1; id <= 3; id++ {
			c.start(id, nil, false)
		}
		res := c.awaitNodes(c.nodes[1], "a controller and three registered nodes", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller != 0 && len(res.Nodes) == 3
		})
		_, _, err := c.nodes[1].client.CreateTopic(ctx, "orders", 3, 3)
		require.NoError(t, err)
		c.awaitReady()
		coord := c.nodes[res.Controller].srv.node.Cluster()
		other := c.nodes[res.Controller%3+1].srv.node.Cluster()
		_, err = cluster.NewProducer(other, "orders").Send([]byte("k"), []byte("plain"))
		require.NoError(t, err)
		var written int
		for p := range 3 {
			hw, err := other.HighWatermark("orders", p)
			require.NoError(t, err)
			if hw == 1 {
				written = p
			}
		}

		pid, epoch, err := coord.InitTransactions(ctx, "tx", time.Minute, -1, -1)
		require.NoError(t, err)
		parts := []cluster.TxnPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}, {Topic: "orders", Partition: 2}}
		require.NoError(t, coord.AddPartitionsToTxn(ctx, "tx", pid, epoch, parts))
		require.NoError(t, coord.AddOffsetsToTxn(ctx, "tx", pid, epoch, "billing"))
		require.NoError(t, coord.TxnOffsetCommit(ctx, "tx", pid, epoch, []cluster.TxnOffset{{Group: "billing", Topic: "orders", Partition: written, Offset: 1}}))
		_, ok, err := other.LoadOffset("billing", "orders", written)
		require.NoError(t, err)
		require.False(t, ok, "pending until the commit")
		require.NoError(t, coord.EndTxn(ctx, "tx", pid, epoch, true))
		got, _ := txnState(t, coord, "tx")
		require.Equal(t, cluster.TxnCompleteCommit, got.State)
		off, ok, err := other.LoadOffset("billing", "orders", written)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, uint64(1), off)
		for p := range 3 {
			r, err := other.ReadStable("orders", p, 0, 10)
			require.NoError(t, err)
			want := uint64(1)
			if p == written {
				want = 2
			}
			require.Equal(t, want, r.HighWatermark, "orders/%d holds its marker", p)
			require.Equal(t, r.HighWatermark, r.LastStable)
		}
	})
}
