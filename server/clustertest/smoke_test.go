package clustertest_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/topic"
)

func TestClustertestSmoke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clustertest.Start(t, 3, clustertest.Options{})
		require.NoError(t, c.Via(1).CreateTopic("orders", 1, 3))
		res, err := cluster.NewProducer(c.Via(2), "orders").SendBatch([]topic.Message{{Payload: []byte("a")}, {Payload: []byte("b")}})
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 3}, res[0].Brokers)
		recs, err := c.Via(3).ReadCommitted("orders", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, recs, 2)
	})
}

func TestClustertestFailoverOfControllerAndLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clustertest.Start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		require.NoError(t, c.Via(ctl).CreateTopic("orders", 3, 3))
		other := 1
		if ctl == 1 {
			other = 2
		}
		for p := range 3 {
			_, err := cluster.NewProducer(c.Via(other), "orders").SendBatchTo(p, []topic.Message{{Payload: []byte("a")}})
			require.NoError(t, err)
		}
		c.Stop(ctl)
		c.Await("every partition led by a running node, the stopped one in no active set", func() (bool, string) {
			for _, id := range c.Running() {
				for p := range 3 {
					st, err := c.Via(id).Status("orders", p)
					if err != nil {
						return false, err.Error()
					}
					if st.Leader == ctl || slices.Contains(st.Active, ctl) {
						return false, fmt.Sprintf("through %d, partition %d: leader %d, active %v", id, p, st.Leader, st.Active)
					}
				}
			}
			return true, ""
		})
		for p := range 3 {
			_, err := cluster.NewProducer(c.Via(other), "orders").SendBatchTo(p, []topic.Message{{Payload: []byte("b")}})
			require.NoError(t, err, "partition %d", p)
			recs, err := c.Via(other).ReadCommitted("orders", p, 0, 10)
			require.NoError(t, err)
			require.Len(t, recs, 2)
		}
	})
}
