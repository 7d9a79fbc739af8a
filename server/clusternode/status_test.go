package clusternode_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/replication"
)

// truth is what every node must say alike of a partition: its status
// without the moments of the reports (each node may have received the
// controller's knowledge at a different heartbeat).
func truth(st cluster.PartitionStatus) string {
	s := fmt.Sprintf("leader %d epoch %d active %v assigned %v high watermark %d;", st.Leader, st.LeaderEpoch, st.Active, st.Assigned, st.HighWatermark)
	for _, r := range st.Replicas {
		s += fmt.Sprintf(" [broker %d %s active %v available %v log end %s lag %s err %v]", r.BrokerID, r.Role, r.Active, r.Available,
			orNil(r.LogEnd), orNil(r.Lag), r.Err)
	}
	return s
}

func orNil(v *uint64) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprint(*v)
}

// brokersTruth is a node's Brokers() as text, DownSince to the
// nanosecond.
func brokersTruth(bs []cluster.BrokerInfo) string {
	s := ""
	for _, b := range bs {
		s += fmt.Sprintf("[%d available %v down since %d]", b.ID, b.Available, b.DownSince.UnixNano())
	}
	return s
}

// oneTruth reports whether every node of ids tells the same status of a
// partition, and the same brokers, and that status satisfies cond.
func oneTruth(c *clustertest.Cluster, ids []int, topicName string, partition int, cond func(st cluster.PartitionStatus) error) (bool, string) {
	var first, firstBrokers string
	for i, id := range ids {
		st, err := c.Via(id).Status(topicName, partition)
		if err == nil {
			err = cond(st)
		}
		if err != nil {
			return false, fmt.Sprintf("through node %d: %v", id, err)
		}
		got, brokers := truth(st), brokersTruth(c.Via(id).Brokers())
		if i == 0 {
			first, firstBrokers = got, brokers
			continue
		}
		if got != first || brokers != firstBrokers {
			return false, fmt.Sprintf("node %d says %s %s, node %d says %s %s", ids[0], first, firstBrokers, id, got, brokers)
		}
	}
	return true, ""
}

// TestNodeStatusOneTruth pins heartbeat.go's "one truth" (and
// cluster.Status in cluster mode): every node answers a partition's status
// — leader, epoch, active set, every replica's availability, log end and
// lag, the high watermark — and the brokers' availability as the
// controller knows them from the heartbeats, so that all nodes tell the
// same within a few heartbeat intervals of a write; each replica's status
// carries the time of the report it comes from. A node that stops is
// unavailable through every node, its log end unknown, well before the
// failover delay.
func TestNodeStatusOneTruth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "truth"
		const partitions = 2
		c := start(t, 3, clustertest.Options{})
		interval := clusternode.HeartbeatInterval(clustertest.DefaultFailoverAfter)
		require.NoError(t, c.Via(1).CreateTopic(name, partitions, 3))
		for _, via := range c.IDs() {
			for p := range partitions {
				send(t, c, via, name, p, fmt.Sprintf("via %d", via))
			}
		}
		wrote := time.Now()
		for p := range partitions {
			c.Await(fmt.Sprintf("every node tells the same of %s/%d", name, p), func() (bool, string) {
				return oneTruth(c, c.IDs(), name, p, func(st cluster.PartitionStatus) error {
					if st.HighWatermark != 3 {
						return fmt.Errorf("high watermark %d", st.HighWatermark)
					}
					return settled(st)
				})
			})
		}
		require.LessOrEqual(t, time.Since(wrote), 3*interval, "within a few heartbeat intervals")
		for _, id := range c.IDs() {
			for p := range partitions {
				st := statusVia(t, c, id, name, p)
				for _, r := range st.Replicas {
					if r.BrokerID == st.Leader {
						continue // asked for its log end as the status is made
					}
					require.False(t, r.ReportedAt.IsZero(), "through node %d: %s/%d broker %d: the report's time", id, name, p, r.BrokerID)
					require.WithinDuration(t, time.Now(), r.ReportedAt, 3*interval, "through node %d: a recent report", id)
				}
			}
			for _, b := range c.Via(id).Brokers() {
				require.True(t, b.Available, "through node %d: %+v", id, b)
			}
		}

		x := others(c, c.Controller())[0]
		c.Stop(x)
		stopped := time.Now()
		running := c.Running()
		for p := range partitions {
			c.Await(fmt.Sprintf("broker %d unavailable through every node", x), func() (bool, string) {
				return oneTruth(c, running, name, p, func(st cluster.PartitionStatus) error {
					i := slices.IndexFunc(st.Replicas, func(r cluster.ReplicaStatus) bool { return r.BrokerID == x })
					if r := st.Replicas[i]; r.Available || r.LogEnd != nil {
						return fmt.Errorf("broker %d: %+v", x, r)
					}
					return nil
				})
			})
		}
		require.Less(t, time.Since(stopped), clustertest.DefaultFailoverAfter, "seen before the controller acts on it")
		for _, id := range running {
			for _, b := range c.Via(id).Brokers() {
				require.Equal(t, b.ID != x, b.Available, "through node %d: %+v", id, b)
				if b.ID == x {
					require.False(t, b.DownSince.IsZero(), "through node %d: its last heartbeat", id)
					require.False(t, b.DownSince.After(stopped), "through node %d: last heard %v, stopped %v", id, b.DownSince, stopped)
				}
			}
		}
	})
}

// TestNodeStatusCapsStaleHeartbeat pins cluster/status.go's capFollowers
// where it matters, in cluster mode (was TestControlStatusStaleHeartbeats):
// heartbeats are snapshots of different moments, so an active follower
// that reported after a write while its leader's last report is from
// before it must not look ahead of its leader — the planner takes a
// follower ahead of its leader out of the active set, and doing that to
// every follower left a partition with no failover candidate when its
// leader then stopped. Here the leader's link to the controller is cut: its
// heartbeats stop (it still counts as up for a few intervals) and the
// controller cannot ask it for its log end, so the controller knows only
// its last report. A write is acknowledged by leader and follower, and the
// follower's next report is newer than the leader's last: the controller
// reports the follower at the leader's reported log end, lag 0, no
// divergence, and keeps it active; every node that can ask the leader
// reports the leader's log end as it is, and no replica ahead of it.
func TestNodeStatusCapsStaleHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "stale"
		const failoverAfter = 5 * time.Second
		interval := clusternode.HeartbeatInterval(failoverAfter) // a broker counts as up for 3 intervals after its last report
		c := start(t, 4, clustertest.Options{FailoverAfter: failoverAfter})
		ctl := c.Controller()
		require.NoError(t, c.Via(ctl).CreateTopic(name, 4, 2))
		p := slices.IndexFunc([]int{0, 1, 2, 3}, func(p int) bool { return !slices.Contains(statusVia(t, c, ctl, name, p).Assigned, ctl) })
		require.GreaterOrEqual(t, p, 0, "a partition the controller holds no replica of")
		st := statusVia(t, c, ctl, name, p)
		leader, follower := st.Leader, st.Followers[0]
		send(t, c, leader, name, p, "a", "b")
		c.Await("the controller has both reports at log end 2", func() (bool, string) {
			st := statusVia(t, c, ctl, name, p)
			return settled(st) == nil && st.HighWatermark == 2, truth(st)
		})

		c.Net.Cut(c.Addr(leader), c.Addr(ctl))
		wrote := time.Now()
		_, res := send(t, c, leader, name, p, "c")
		require.Equal(t, []int{min(leader, follower), max(leader, follower)}, res[0].Brokers)
		time.Sleep(interval + interval/5) // the follower has reported since; the leader has not

		st = statusVia(t, c, ctl, name, p)
		for _, r := range st.Replicas {
			require.True(t, r.Available, "broker %d still counts as up: %+v", r.BrokerID, r)
			require.NotNil(t, r.LogEnd, "%+v", r)
			require.Equal(t, uint64(2), *r.LogEnd, "broker %d at its leader's last reported log end", r.BrokerID)
			require.NotNil(t, r.Lag, "%+v", r)
			require.Zero(t, *r.Lag)
			require.False(t, errors.Is(r.Err, cluster.ErrReplicaDivergence), "%v", r.Err)
			if r.BrokerID == follower {
				require.True(t, r.ReportedAt.After(wrote), "the follower reported after the write (at log end 3): %v", r.ReportedAt)
			} else {
				require.False(t, r.ReportedAt.After(wrote), "the leader's last report is from before the write: %v", r.ReportedAt)
			}
		}
		require.Equal(t, st.Assigned, st.Active, "no one taken out")
		for _, id := range others(c, ctl, leader) {
			st := statusVia(t, c, id, name, p)
			for _, r := range st.Replicas {
				require.NotNil(t, r.LogEnd, "through node %d: %+v", id, r)
				require.NotNil(t, r.Lag, "through node %d: no replica ahead of its leader: %+v", id, r)
				require.False(t, errors.Is(r.Err, cluster.ErrReplicaDivergence), "through node %d: %v", id, r.Err)
				if r.BrokerID == leader {
					require.Equal(t, uint64(3), *r.LogEnd, "through node %d: the leader's log end as it answers it now", id)
				}
			}
		}
		c.Heal()
	})
}

// TestNodeNewControllerCountsFromItsStart pins heartbeat.go's count of a
// new term: a node that has just won the metadata group's election has
// heard no heartbeat yet, and that makes no broker down — from the moment
// it leads, every broker that runs counts up for a window, its first
// heartbeat on the way. (Counted from before it led, every other broker
// looked down at once, and an operator's failover then took the live
// followers out of the active set.)
func TestNodeNewControllerCountsFromItsStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := start(t, 3, clustertest.Options{})
		old := c.Controller()
		c.Stop(old)
		live := others(c, old)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			leader := 0
			for _, id := range live {
				if c.Node(id).Controller() == id {
					leader = id
				}
			}
			if leader == 0 {
				continue
			}
			for _, b := range c.Via(leader).Brokers() {
				if slices.Contains(live, b.ID) {
					require.True(t, b.Available, "the new controller %d counts broker %d up at once", leader, b.ID)
				}
			}
			return
		}
		t.Fatal("no new controller within a minute")
	})
}

// TestNodeReportsDatedByTheController pins heartbeat.go's clock: the
// controller dates each report it keeps by its arrival, so reported_at is
// on one clock, the controller's, whatever the reporting broker's clock
// says — a report stamped an hour behind is not shown an hour old.
func TestNodeReportsDatedByTheController(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := start(t, 3, clustertest.Options{})
		require.NoError(t, c.Via(1).CreateTopic("orders", 1, 3))
		c.AwaitReady()
		ctl := c.Controller()
		st := statusVia(t, c, ctl, "orders", 0)
		follower := st.Followers[0]
		end := uint64(0)
		dial := c.Net.Dialer("a broker with a slow clock")
		rpc := replication.NewClient(func(ctx context.Context, _, addr string) (net.Conn, error) { return dial(ctx, addr) }, 0)
		defer rpc.Close()
		_, err := rpc.Heartbeat(t.Context(), c.Addr(ctl), replication.Heartbeat{Node: follower, Replicas: []cluster.ReplicaReport{
			{Topic: "orders", Partition: 0, LogEnd: &end, At: time.Now().Add(-time.Hour)}}})
		require.NoError(t, err)
		st = statusVia(t, c, ctl, "orders", 0)
		for _, rs := range st.Replicas {
			if rs.BrokerID == follower {
				require.Equal(t, time.Now(), rs.ReportedAt, "dated when it arrived, by the controller's clock")
			}
		}
	})
}
