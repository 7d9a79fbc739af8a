package clusternode_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
)

// A change of a transactional id's state is a compare-and-set through
// Raft: a save decided on a version the replicated state no longer holds
// is refused — proposed by the leader or by a follower, whose refusal
// travels back over the internal API as ErrStaleTransaction — and changes
// nothing on any node; the same save sent again is accepted as done.
func TestTransactionsCompareAndSetThroughRaft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clustertest.Start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		follower := others(c, ctl)[0]
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		first := cluster.Transaction{ID: "tx", ProducerID: 4, State: cluster.TxnEmpty, Timeout: time.Minute, Updated: t0, Version: 1, Nonce: 1}
		require.NoError(t, clusternode.SaveTransaction(c.Node(ctl), c.Ctx(), cluster.TxnStamp{}, first))
		second := first
		second.Epoch, second.Version, second.Nonce = 1, 2, 2
		require.NoError(t, clusternode.SaveTransaction(c.Node(follower), c.Ctx(), first.Stamp(), second), "through a follower")
		require.NoError(t, clusternode.SaveTransaction(c.Node(follower), c.Ctx(), first.Stamp(), second), "the same save again")

		rival := first
		rival.Epoch, rival.Version, rival.Nonce = 1, 2, 3
		for _, via := range []int{ctl, follower} {
			err := clusternode.SaveTransaction(c.Node(via), c.Ctx(), first.Stamp(), rival)
			require.ErrorIs(t, err, cluster.ErrStaleTransaction, "through node %d", via)
			fresh := first
			fresh.Nonce = 4
			err = clusternode.SaveTransaction(c.Node(via), c.Ctx(), cluster.TxnStamp{}, fresh)
			require.ErrorIs(t, err, cluster.ErrStaleTransaction, "a first save of an id that has a state, through node %d", via)
		}
		for _, id := range c.IDs() {
			c.Await("every node holds the second save", func() (bool, string) {
				got, ok, err := clusternode.Transaction(c.Node(id), "tx")
				require.NoError(t, err)
				return ok && got.Version == 2 && got.Nonce == 2, "not yet"
			})
		}
	})
}
