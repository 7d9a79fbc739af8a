package clusternode_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
)

// A reservation of producer ids the metadata refuses — none, or more than
// MaxProducerIDCount — is refused through Raft from the leader and from a
// follower alike, as ErrInvalidArgument, and reserves nothing: the next
// block starts where the last one ended.
func TestProducerIDsMalformedReservationRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clustertest.Start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		first, err := clusternode.AllocateProducerIDs(c.Node(ctl), c.Ctx(), 5)
		require.NoError(t, err)
		require.Equal(t, int64(0), first)
		for _, via := range []int{ctl, others(c, ctl)[0]} {
			for _, count := range []int64{0, -1, cluster.MaxProducerIDCount + 1} {
				_, err := clusternode.AllocateProducerIDs(c.Node(via), c.Ctx(), count)
				require.ErrorIs(t, err, cluster.ErrInvalidArgument, "count %d through node %d", count, via)
			}
		}
		first, err = clusternode.AllocateProducerIDs(c.Node(others(c, ctl)[1]), c.Ctx(), cluster.ProducerIDBlock)
		require.NoError(t, err)
		require.Equal(t, int64(5), first, "the refusals reserved nothing")
		id, err := c.Via(ctl).NewProducerID(c.Ctx())
		require.NoError(t, err)
		require.Equal(t, int64(5+cluster.ProducerIDBlock), id)
	})
}
