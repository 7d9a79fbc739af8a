package clusternode_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/clustertest"
)

// TestRemovalFollowerCutFromLeader pins cluster/leader.go's rule between
// processes (doc.go § Writes: "A leader stops waiting for a follower only
// once the follower's removal from the active set is committed and
// applied on the leader"): a follower whose process is up — its
// heartbeats reach the controller — but which its leader cannot reach
// stays in the active set until the controller takes it out, and until
// then no write is acknowledged (a *cluster.ReplicationError naming it);
// the controller's deactivation is journaled, after which writes are
// acknowledged by the replicas left, each answer naming only them. When
// the link heals, the follower is recovered into the active set, its log
// equal to its leader's.
func TestRemovalFollowerCutFromLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "removal"
		c := start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		require.NoError(t, c.Via(ctl).CreateTopic(name, 3, 3))
		leader := others(c, ctl)[0]
		follower := others(c, ctl, leader)[0]
		p := ledBy(t, c, ctl, name, 3, leader)
		acked, _ := send(t, c, leader, name, p, "before")

		c.Net.Cut(c.Addr(leader), c.Addr(follower))
		_, err := cluster.NewProducer(c.Via(leader), name).SendBatchTo(p, msgs("while it is active"))
		var re *cluster.ReplicationError
		require.ErrorAs(t, err, &re, "acknowledged without an active follower")
		require.Equal(t, []int{follower}, re.BrokerIDs)
		require.Contains(t, statusVia(t, c, leader, name, p).Active, follower, "the leader did not drop it on its own")
		acked = append(acked, log.Record{Offset: re.Offset, Payload: []byte("while it is active")})

		awaitEvery(c, fmt.Sprintf("broker %d out of the active set", follower), c.IDs(), name, p, func(st cluster.PartitionStatus) error {
			if slices.Contains(st.Active, follower) || st.Leader != leader {
				return fmt.Errorf("leader %d active %v", st.Leader, st.Active)
			}
			return nil
		})
		require.True(t, slices.ContainsFunc(journal(t, c, ctl), func(e cluster.JournalEntry) bool {
			return e.Event == cluster.EventDeactivate && e.Phase == cluster.PhaseDone && e.By == cluster.ByController &&
				e.Topic == name && e.Partition == p && e.Broker == follower
		}), "the controller's deactivation is journaled")
		recs, res := send(t, c, leader, name, p, "after the removal")
		require.Equal(t, []int{min(leader, ctl), max(leader, ctl)}, res[0].Brokers, "acknowledged by the replicas left")
		acked = append(acked, recs...)

		c.Heal()
		awaitEvery(c, fmt.Sprintf("broker %d recovered", follower), c.IDs(), name, p, func(st cluster.PartitionStatus) error {
			if st.HighWatermark != 3 {
				return fmt.Errorf("high watermark %d", st.HighWatermark)
			}
			return settled(st)
		})
		leaderLog := replicaRecords(t, c, leader, name, p)
		require.Equal(t, payloadsOf(acked), payloadsOf(leaderLog), "the leader kept the record no follower acknowledged; it is committed once every active replica holds it")
		for _, id := range c.IDs() {
			sameRecords(t, leaderLog, replicaRecords(t, c, id, name, p), "broker %d", id)
		}
	})
}
