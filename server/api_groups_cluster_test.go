package server

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/group"
)

// docs/groups.md § Cluster mode: group state lives on one node, the
// controller. Another node answers a group request 421 not_coordinator
// naming the controller's HTTP address, and apiclient sends it there, so
// a member may talk to any node.
func TestGroupClusterNotCoordinator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 2)
		n1 := c.start(1, c.upTo(1), false)
		c.awaitNodes(n1, "node 1 leads", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller == 1 && len(res.Nodes) == 1 && res.Nodes[0].HTTPAddr != ""
		})
		n2 := c.start(2, c.upTo(2), true)
		_, err := n1.client.AddNode(ctx, 2, c.peers[2])
		require.NoError(t, err)
		c.awaitNodes(n2, "node 2 knows node 1's HTTP address", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller == 1 && len(res.Nodes) == 2 && res.Nodes[0].HTTPAddr != ""
		})
		_, _, err = n1.client.CreateTopic(ctx, "orders", 2, 1)
		require.NoError(t, err)
		c.awaitReady()

		status, body := n2.raw(t, http.MethodPost, "/api/groups/billing/heartbeat", `{"member_epoch":0,"topics":["orders"]}`)
		require.Equal(t, http.StatusMisdirectedRequest, status, body)
		e := errorOf(t, body)
		require.Equal(t, apiclient.CodeNotCoordinator, e.Code)
		require.Equal(t, c.httpAddr(1), e.Coordinator)

		m, err := n2.client.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
		require.NoError(t, err, "apiclient follows not_coordinator")
		require.Equal(t, []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}}, m.Assignment)
		_, err = n2.client.CommitGroupOffset(ctx, "billing", "orders", 1, m.MemberID, m.MemberEpoch, 0)
		require.NoError(t, err)
		d, err := n2.client.Group(ctx, "billing")
		require.NoError(t, err)
		require.Len(t, d.Members, 1)
		list, err := n1.client.Groups(ctx)
		require.NoError(t, err)
		require.Equal(t, "billing", list.Groups[0].Group)

		// A plain commit or reset goes to the coordinator too, which alone
		// knows that the group has members and refuses it.
		status, body = n2.raw(t, http.MethodPut, "/api/consumers/billing/offsets/orders/0", `{"offset":0}`)
		require.Equal(t, http.StatusMisdirectedRequest, status, body)
		_, err = n2.client.CommitOffset(ctx, "billing", "orders", 0, 0)
		require.ErrorIs(t, err, apiclient.ErrConflict, "followed to the coordinator, refused there")
		_, err = n2.client.ResetOffset(ctx, "billing", "orders", 0, 0)
		require.ErrorIs(t, err, apiclient.ErrConflict)
	})
}

// docs/groups.md § Cluster mode: when this node stops leading the
// metadata group, both coordinators forget their groups at once (a
// waiting Kafka join is answered NOT_COORDINATOR), and group requests are
// sent to the new controller; when it leads again, it coordinates from
// empty coordinators, and since another node led meanwhile, partitions
// nobody claims are withheld for a session timeout.
func TestGroupClusterLeadershipClearsCoordinators(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &Server{cfg: Config{NodeID: 1}, logger: slog.New(slog.DiscardHandler), metrics: newMetrics(),
			nodeOpen: make(chan struct{}), groupsStop: make(chan struct{})}
		t.Cleanup(func() { close(s.groupsStop) }) // no node: its saved leases are never read
		require.NoError(t, s.openGroups())
		counts := func([]string) map[string]int32 { return map[string]int32{"orders": 2} }
		s.consumerGroups = group.NewConsumerCoordinator(group.ConsumerConfig{Registry: s.groups, Topics: counts})
		t.Cleanup(s.consumerGroups.Close)
		t.Cleanup(s.classic.Close)
		ctx := context.Background()

		s.leaderChanged(1)
		require.True(t, s.coordinating.Load())
		a, err := s.consumerGroups.Heartbeat(ctx, "billing", group.Heartbeat{Topics: []string{"orders"}})
		require.NoError(t, err)
		require.Len(t, a.Partitions, 1, "a fresh node that led first withholds nothing")
		join := group.JoinRequest{Group: "audit", SessionTimeout: 10 * time.Second, ProtocolType: "consumer",
			Protocols: []group.ProtocolMetadata{{Name: "range"}}}
		first, err := s.classic.Join(ctx, join)
		require.NoError(t, err)
		_, err = s.classic.Sync(ctx, group.SyncRequest{Group: "audit", MemberRef: group.MemberRef{MemberID: first.MemberID}, Generation: first.Generation})
		require.NoError(t, err)
		waiting := make(chan error, 1)
		go func() {
			_, err := s.classic.Join(ctx, join) // a second member: waits for the first to join again
			waiting <- err
		}()
		synctest.Wait() // the second join waits
		d, _ := s.classic.Describe("audit")
		require.Len(t, d.Members, 2)

		s.leaderChanged(2)
		require.False(t, s.coordinating.Load())
		require.ErrorIs(t, <-waiting, group.ErrNotCoordinator)
		require.Empty(t, s.classic.List())
		require.Empty(t, s.consumerGroups.List())
		_, ok := s.groups.Protocol("billing")
		require.False(t, ok)

		s.leaderChanged(1)
		require.True(t, s.coordinating.Load())
		a, err = s.consumerGroups.Heartbeat(ctx, "billing", group.Heartbeat{Topics: []string{"orders"}})
		require.NoError(t, err)
		require.Empty(t, a.Partitions, "node 2's members may still read: nothing unclaimed is handed out")
	})
}

// docs/groups.md § Restarts and a new coordinator, in cluster mode: the
// groups' leases are part of the replicated state, so a node that
// restarts and coordinates again withholds a partition only while its
// saved owner's lease lasts; a new group is assigned at once.
func TestGroupClusterRestartAssignsNewGroupAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 1)
		n1 := c.start(1, c.upTo(1), false)
		c.awaitNodes(n1, "node 1 leads", func(res *apiclient.ClusterNodesResponse) bool { return res.Controller == 1 })
		_, _, err := n1.client.CreateTopic(ctx, "orders", 2, 1)
		require.NoError(t, err)
		c.awaitReady()
		m, err := n1.client.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
		require.NoError(t, err)
		require.Len(t, m.Assignment[0].Partitions, 2)
		c.stop(1)

		n1 = c.start(1, c.upTo(1), false)
		c.awaitNodes(n1, "node 1 leads again", func(res *apiclient.ClusterNodesResponse) bool { return res.Controller == 1 })
		start := time.Now()
		var fresh *apiclient.GroupHeartbeatResponse
		c.await("a new group is assigned", func() (bool, string) {
			res, err := n1.client.GroupHeartbeat(ctx, "audit", apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
			if err != nil {
				return false, err.Error()
			}
			if fresh = res; len(res.Assignment) == 0 {
				_, _ = n1.client.GroupHeartbeat(ctx, "audit", apiclient.GroupHeartbeatRequest{MemberID: res.MemberID, MemberEpoch: -1})
				return false, "nothing assigned yet"
			}
			return true, ""
		})
		require.Len(t, fresh.Assignment[0].Partitions, 2)
		require.Less(t, time.Since(start), group.DefaultHeartbeatInterval, "within a heartbeat interval, not a session timeout")
		other, err := n1.client.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
		require.NoError(t, err)
		require.Empty(t, other.Assignment, "the saved lease of billing's member has not ended")
	})
}

// docs/phase-7-processes.md § Clients reach any node: a
// commit acknowledged through the coordinator reads back through any
// other node at once — the other node first waits until its copy of the
// metadata has come as far as the controller's — rather than a few
// milliseconds later, when its copy learns of the commit. Time is
// synctest's: nothing here waits for Raft's commit timeout.
func TestGroupClusterOffsetReadYourWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 2)
		n1 := c.start(1, c.upTo(1), false)
		c.awaitNodes(n1, "node 1 leads", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller == 1 && len(res.Nodes) == 1 && res.Nodes[0].HTTPAddr != ""
		})
		n2 := c.start(2, c.upTo(2), true)
		_, err := n1.client.AddNode(ctx, 2, c.peers[2])
		require.NoError(t, err)
		c.awaitNodes(n2, "node 2 knows node 1", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller == 1 && len(res.Nodes) == 2
		})
		_, _, err = n1.client.CreateTopic(ctx, "orders", 1, 1)
		require.NoError(t, err)
		c.awaitReady()
		var recs []apiclient.ProduceRecord
		for range 5 {
			recs = append(recs, apiclient.ProduceRecord{Value: []byte("x")})
		}
		_, err = n1.client.ProduceTo(ctx, "orders", 0, recs)
		require.NoError(t, err)

		for off := uint64(1); off <= 5; off++ {
			_, err := n1.client.CommitOffset(ctx, "billing", "orders", 0, off)
			require.NoError(t, err)
			one, err := n2.client.ConsumerOffset(ctx, "billing", "orders", 0)
			require.NoError(t, err)
			require.NotNil(t, one.Offset, "commit %d not seen through node 2", off)
			require.Equal(t, off, *one.Offset)
			all, err := n2.client.ConsumerOffsets(ctx, "billing")
			require.NoError(t, err)
			require.Len(t, all.Offsets, 1)
			require.Equal(t, off, all.Offsets[0].Offset)
		}
	})
}
