package clusternode_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
)

// TestRejoinActiveWithinHeartbeatsOfHeal pins how soon a node cut off
// long enough to be fenced is whole again once the cut heals
// (docs/phase-7-processes.md § Failure detection): within five heartbeat
// intervals every partition has all its replicas active and level again
// (two to four in practice: each recovery the node refuses for metadata it
// has not applied yet waits for its next report).
// The cut lasts twenty seconds of fake time — long enough that Raft's
// leader, left to itself, would pause about ten seconds between its tries
// to reach the node (raftmeta's peerWaitTransport keeps it trying), and
// that the node's first recovery may meet a copy of the metadata it has
// not applied yet (the controller tries that again within a pass or two).
func TestRejoinActiveWithinHeartbeatsOfHeal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "rejoin"
		const failoverAfter = 3 * time.Second
		c := start(t, 3, clustertest.Options{FailoverAfter: failoverAfter})
		ctl := c.Controller()
		x := others(c, ctl)[0]
		require.NoError(t, c.Via(ctl).CreateTopic(name, 3, 3))
		for p := range 3 {
			send(t, c, ctl, name, p, "a", "b")
		}

		c.Isolate(x)
		for p := range 3 {
			awaitEvery(c, "the cut-off node fenced", others(c, x), name, p, func(st cluster.PartitionStatus) error {
				if slices.Contains(st.Active, x) || st.Leader == x {
					return fmt.Errorf("leader %d active %v", st.Leader, st.Active)
				}
				return nil
			})
			send(t, c, ctl, name, p, "c") // the node has records to catch up on
		}
		time.Sleep(20 * time.Second)

		c.Heal()
		healed := time.Now()
		for p := range 3 {
			awaitEvery(c, "the returning node active and level again", c.IDs(), name, p, settled)
		}
		took, bound := time.Since(healed), 5*clusternode.HeartbeatInterval(failoverAfter)
		t.Logf("every replica active again %v after the cut healed (heartbeat interval %v)", took, clusternode.HeartbeatInterval(failoverAfter))
		require.LessOrEqual(t, took, bound, "the returning node took longer than five heartbeat intervals")
	})
}
