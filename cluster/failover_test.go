package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// payloads reads a partition through the consumer path (up to the high
// watermark) and returns the payloads as strings.
func payloads(t *testing.T, c *Cluster, topicName string, p int) []string {
	t.Helper()
	recs, err := c.ReadCommitted(topicName, p, 0, 1000)
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Payload))
	}
	return out
}

// The story of docs/phase-5-failover.md § Worked example, end to end: 3
// brokers, rf 3; an unacknowledged record on the old leader only; failover
// picks the right follower; the next write reuses the offset; the old leader
// returns, recovery drops exactly the unacknowledged tail, the replica is
// identical and active again, and it is still a follower after reopening. A
// second failover then works.
func TestFailoverSpecStory(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	for _, p := range []string{"r0", "r1", "r2"} {
		_, err := prod.Send(nil, []byte(p))
		require.NoError(t, err)
	}

	// Offset 3 reaches only the leader: both followers are down.
	require.NoError(t, c.StopBroker(2))
	require.NoError(t, c.StopBroker(3))
	_, err := prod.Send(nil, []byte("unacked"))
	var re *ReplicationError
	require.ErrorAs(t, err, &re)
	require.Equal(t, []int{2, 3}, re.BrokerIDs)
	_, err = c.StartBroker(2)
	require.NoError(t, err)
	_, err = c.StartBroker(3)
	require.NoError(t, err)
	require.Equal(t, []string{"r0", "r1", "r2"}, payloads(t, c, "orders", 0), "consumers never see the unacknowledged record")

	// The leader fails; the followers tie at log end 3, so the lowest id wins.
	require.NoError(t, c.StopBroker(1))
	fo, err := c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, FailoverResult{Topic: "orders", Partition: 0, OldLeaderBrokerID: 1, NewLeaderBrokerID: 2,
		LeaderEpoch: 1, LogEndOffset: 3, Deactivated: []int{1}, Active: []int{2, 3}}, fo)
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, []int{1, 3}, st.Followers)
	require.Equal(t, []int{1, 2, 3}, st.Assigned)
	require.Equal(t, []int{2, 3}, st.Active, "reduced redundancy is visible")
	m := c.Metadata().Topics["orders"].Partitions[0]
	require.Equal(t, PartitionMetadata{Partition: 0, Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{2, 3}}, m)

	// Writes continue with the reduced active set and reuse offset 3.
	res, err := prod.Send(nil, []byte("r3-new"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), res.Offset)
	require.Equal(t, 2, res.LeaderBrokerID)
	require.Equal(t, []int{2, 3}, res.Brokers)

	// The old leader returns as a follower; recovery drops exactly offset 3.
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	st, err = c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, RoleFollower, st.Replicas[0].Role)
	require.False(t, st.Replicas[0].Active)
	rr, err := c.RecoverReplica("orders", 0, 1)
	require.NoError(t, err)
	// The cut record is kept, not destroyed: a quarantine file beside the
	// log, named after the offsets, holds it in the log's frame format.
	require.Equal(t, filepath.Dir(replicaPath(root, 1, "orders", 0)), filepath.Dir(rr.Quarantine))
	from, to, _, ok := ParseQuarantineName(filepath.Base(rr.Quarantine))
	require.True(t, ok)
	require.Equal(t, [2]uint64{3, 4}, [2]uint64{from, to})
	var kept []string
	require.NoError(t, log.ScanFileFrom(rr.Quarantine, 3, log.Options{}, func(_ int64, r log.Record) error {
		kept = append(kept, string(r.Payload))
		return nil
	}))
	require.Equal(t, []string{"unacked"}, kept)
	rr.Quarantine = ""
	require.Equal(t, RecoveryResult{Topic: "orders", Partition: 0, BrokerID: 1, CommonPrefix: 3, Dropped: 1, DroppedFrom: 3,
		DroppedTo: 4, Copied: 1, LogEnd: 4, Active: []int{1, 2, 3}}, rr)
	leaderBytes, err := os.ReadFile(replicaPath(root, 2, "orders", 0))
	require.NoError(t, err)
	for _, id := range []int{1, 3} {
		b, err := os.ReadFile(replicaPath(root, id, "orders", 0))
		require.NoError(t, err)
		require.True(t, bytes.Equal(leaderBytes, b), "broker %d identical to the leader", id)
	}
	require.Equal(t, []string{"r0", "r1", "r2", "r3-new"}, payloads(t, c, "orders", 0))

	// Reopen: broker 1 is still a follower, active again.
	c = reopen(t, c, root, 3)
	st, err = c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 2, st.Leader)
	require.Equal(t, []int{1, 2, 3}, st.Active)
	prod = NewProducer(c, "orders")
	res, err = prod.Send(nil, []byte("r4"))
	require.NoError(t, err)
	require.Equal(t, ReplicaStatus{BrokerID: 1, Role: RoleFollower, Active: true, Available: true, LogEnd: u64(5), Lag: u64(0)}, mustStatus(t, c).Replicas[0])

	// A second failover after recovery: 1 and 3 tie, 1 is lowest.
	require.NoError(t, c.StopBroker(2))
	fo, err = c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 1, fo.NewLeaderBrokerID)
	require.Equal(t, uint64(5), fo.LogEndOffset)
	_, err = prod.Send(nil, []byte("r5"))
	require.NoError(t, err)
	require.Equal(t, []string{"r0", "r1", "r2", "r3-new", "r4", "r5"}, payloads(t, c, "orders", 0))
}

func mustStatus(t *testing.T, c *Cluster) PartitionStatus {
	t.Helper()
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	return st
}

// docs/phase-5-failover.md § Why failover is explicit: failover refuses to
// run while the leader is still usable, and a refusal leaves every log and
// cluster.meta byte for byte unchanged
// (docs/phase-5-failover.md § Candidate selection and safety checks).
func TestFailoverRefusalsChangeNothing(t *testing.T) {
	t.Run("leader alive", func(t *testing.T) {
		c, root := newCluster(t, 3)
		require.NoError(t, c.CreateTopic("orders", 1, 3))
		sendN(t, NewProducer(c, "orders"), "k", 3)
		before := snapshot(t, root)
		_, err := c.Failover("orders", 0)
		var ls *LeaderStillAvailableError
		require.ErrorAs(t, err, &ls)
		require.Equal(t, 1, ls.BrokerID)
		require.Equal(t, before, snapshot(t, root))
	})
	t.Run("divergent candidates", func(t *testing.T) {
		c, root := newCluster(t, 3)
		require.NoError(t, c.CreateTopic("orders", 1, 3))
		sendN(t, NewProducer(c, "orders"), "k", 3)
		for id := 1; id <= 3; id++ {
			require.NoError(t, c.StopBroker(id))
		}
		recs := readAll(t, replicaPath(root, 3, "orders", 0))
		rewrite(t, replicaPath(root, 3, "orders", 0), 1, log.Record{Offset: 1, Timestamp: recs[1].Timestamp, Payload: []byte("other history")})
		for _, id := range []int{2, 3} {
			_, err := c.StartBroker(id)
			require.NoError(t, err)
		}
		before := snapshot(t, root)
		_, err := c.Failover("orders", 0)
		var de *ReplicaDivergenceError
		require.ErrorAs(t, err, &de)
		require.Equal(t, 3, de.BrokerID)
		require.Equal(t, uint64(1), de.Offset)
		require.Equal(t, before, snapshot(t, root))
		require.Equal(t, 1, mustStatus(t, c).Leader)
	})
	t.Run("no candidate", func(t *testing.T) {
		c, root := newCluster(t, 2)
		require.NoError(t, c.CreateTopic("orders", 1, 2))
		require.NoError(t, c.StopBroker(1))
		require.NoError(t, c.StopBroker(2))
		before := snapshot(t, root)
		_, err := c.Failover("orders", 0)
		var ne *NoEligibleReplicaError
		require.ErrorAs(t, err, &ne)
		require.Equal(t, 1, ne.LeaderBrokerID)
		require.Equal(t, before, snapshot(t, root))
		require.Equal(t, 1, mustStatus(t, c).Leader, "a partition is never leaderless")
	})
	t.Run("only an inactive follower", func(t *testing.T) {
		c, root := newCluster(t, 2)
		require.NoError(t, c.CreateTopic("orders", 1, 2))
		require.NoError(t, c.StopBroker(1))
		_, err := c.Failover("orders", 0)
		require.NoError(t, err)
		_, err = c.StartBroker(1) // back, but inactive until recovered
		require.NoError(t, err)
		require.NoError(t, c.StopBroker(2))
		before := snapshot(t, root)
		_, err = c.Failover("orders", 0)
		require.ErrorIs(t, err, ErrNoEligibleReplica)
		require.Equal(t, before, snapshot(t, root))
	})
	t.Run("rf 1", func(t *testing.T) {
		c, _ := newCluster(t, 1)
		require.NoError(t, c.CreateTopic("orders", 1, 1))
		require.NoError(t, c.StopBroker(1))
		_, err := c.Failover("orders", 0)
		require.ErrorIs(t, err, ErrNoEligibleReplica)
	})
}

// docs/phase-5-failover.md § Candidate selection and safety checks: if the
// write of cluster.meta fails, the failover is not reported and the old
// leader stays recorded — on disk and in memory.
func TestFailoverMetadataWriteFails(t *testing.T) {
	for _, op := range []logtest.Op{logtest.OpRename, logtest.OpSync, logtest.OpOpen} {
		t.Run(string(op), func(t *testing.T) {
			root := t.TempDir()
			ffs := logtest.NewFaultFS(nil)
			c, err := OpenWithOptions(root, Options{FS: ffs, Broker: BrokerOptions{FS: durable.OS}})
			require.NoError(t, err)
			defer c.Close()
			for id := 1; id <= 3; id++ {
				_, err := c.StartBroker(id)
				require.NoError(t, err)
			}
			require.NoError(t, c.CreateTopic("orders", 1, 3))
			sendN(t, NewProducer(c, "orders"), "k", 2)
			require.NoError(t, c.StopBroker(1))
			before := snapshot(t, root)

			meta := filepath.Join(root, MetaFileName)
			ffs.SetFault(func(o logtest.Op, path string) error {
				// Reading cluster.meta back still works: the write fails,
				// the file it would replace is intact and readable.
				if o == op && strings.HasPrefix(path, meta) && !(o == logtest.OpOpen && path == meta) {
					return logtest.ErrInjected
				}
				return nil
			})
			_, err = c.Failover("orders", 0)
			require.ErrorIs(t, err, logtest.ErrInjected)
			require.Equal(t, before, snapshot(t, root))
			require.Equal(t, 1, mustStatus(t, c).Leader)
			require.Equal(t, []int{1, 2, 3}, mustStatus(t, c).Active)
			require.Equal(t, 1, c.Metadata().Topics["orders"].Partitions[0].Leader)
			_, err = NewProducer(c, "orders").Send(nil, []byte("x"))
			require.ErrorIs(t, err, ErrLeaderUnavailable, "the old leader is still the recorded one")

			ffs.SetFault(nil)
			fo, err := c.Failover("orders", 0)
			require.NoError(t, err)
			require.Equal(t, 2, fo.NewLeaderBrokerID)
		})
	}
}

// An active follower that is unavailable at failover cannot be checked
// against the new leader, so it leaves the active set too; writes then go
// to the replicas that remain.
func TestFailoverDeactivatesUnavailableFollowers(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	sendN(t, NewProducer(c, "orders"), "k", 2)
	require.NoError(t, c.StopBroker(1))
	require.NoError(t, c.StopBroker(3))
	fo, err := c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, []int{1, 3}, fo.Deactivated)
	require.Equal(t, []int{2}, fo.Active)
	res, err := NewProducer(c, "orders").Send(nil, []byte("x"))
	require.NoError(t, err)
	require.Equal(t, []int{2}, res.Brokers)
	_, err = c.StartBroker(3)
	require.NoError(t, err)
	rr, err := c.RecoverReplica("orders", 0, 3)
	require.NoError(t, err)
	require.Equal(t, 0, rr.Dropped)
	require.Equal(t, 1, rr.Copied)
	require.Equal(t, []int{2, 3}, rr.Active)
}

// The failover winner has the most surviving history, even when that
// history was never acknowledged.
func TestFailoverPicksLongestLog(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 2)
	require.NoError(t, c.StopBroker(2))
	_, err := prod.Send(nil, []byte("on 1 and 3"))
	require.ErrorIs(t, err, ErrReplicationFailed)
	_, err = c.StartBroker(2)
	require.NoError(t, err)
	require.NoError(t, c.StopBroker(1))
	fo, err := c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 3, fo.NewLeaderBrokerID)
	require.Equal(t, uint64(3), fo.LogEndOffset)
	// Broker 2 is active, consistent and lagging: catch-up repairs it.
	_, err = c.CatchUp("orders", 0, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "on 1 and 3"}, payloads(t, c, "orders", 0))
}
