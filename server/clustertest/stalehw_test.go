package clustertest_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clustertest"
)

// A leader cut off from the others keeps the records it appended and
// could not replicate; the others fail the partition over and write
// other records at those offsets. When the links heal, the old leader,
// not yet told of the failover, still serves reads: it must not raise its
// high watermark over its own unacknowledged tail because the followers'
// logs (now the new leader's) reach as far. The chaos suite found this as
// a read during the run that the final log rewrote (docs/chaos.md).
func TestClustertestStaleLeaderServesNoUnacknowledgedTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clustertest.Start(t, 3, clustertest.Options{FailoverAfter: failoverAfter})
		require.NoError(t, c.Via(1).CreateTopic("orders", 1, 3))
		st, err := c.Via(1).Status("orders", 0)
		require.NoError(t, err)
		old := st.Leader
		other := 1 + old%3
		for _, p := range []string{"a", "b", "c"} {
			_, err := cluster.NewProducer(c.Via(other), "orders").Send(nil, []byte(p))
			require.NoError(t, err)
		}
		c.Isolate(old)
		_, err = cluster.NewProducer(c.Via(old), "orders").Send(nil, []byte("never acknowledged"))
		require.Error(t, err, "an isolated leader acknowledges nothing")
		c.Await("a new leader", func() (bool, string) {
			st, err := c.Via(other).Status("orders", 0)
			if err != nil {
				return false, err.Error()
			}
			return st.Leader != old, fmt.Sprintf("leader %d", st.Leader)
		})
		for _, p := range []string{"d", "e"} {
			_, err := cluster.NewProducer(c.Via(other), "orders").Send(nil, []byte(p))
			require.NoError(t, err)
		}
		c.Heal()
		recs, err := c.Via(old).ReadCommitted("orders", 0, 0, 10)
		if err == nil {
			for _, r := range recs {
				require.NotContains(t, string(r.Payload), "never acknowledged", "offset %d", r.Offset)
			}
		}
	})
}
