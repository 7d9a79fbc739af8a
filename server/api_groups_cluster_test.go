package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// docs/groups.md § Cluster mode: group state lives on one node, the
// controller. Another node answers a group request 421 not_coordinator
// naming the controller's HTTP address, and apiclient sends it there, so
// a member may talk to any node.
func TestGroupClusterNotCoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of two nodes")
	}
	ctx := context.Background()
	addr1, addr2 := freeAddr(t), freeAddr(t)
	n1 := startClusterNode(t, 1, ClusterList{1: addr1}, false)
	waitNodes(t, n1.client, "node 1 leads", func(res *apiclient.ClusterNodesResponse) bool {
		return res.Controller == 1 && len(res.Nodes) == 1 && res.Nodes[0].HTTPAddr != ""
	})
	n2 := startClusterNode(t, 2, ClusterList{1: addr1, 2: addr2}, true)
	_, err := n1.client.AddNode(ctx, 2, addr2)
	require.NoError(t, err)
	waitNodes(t, n2.client, "node 2 knows node 1's HTTP address", func(res *apiclient.ClusterNodesResponse) bool {
		return res.Controller == 1 && len(res.Nodes) == 2 && res.Nodes[0].HTTPAddr != ""
	})
	_, _, err = n1.client.CreateTopic(ctx, "orders", 2, 1)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := n1.client.Ready(ctx)
		return err == nil
	}, 15*time.Second, 50*time.Millisecond, "every partition served")

	status, body := rawRequest(t, n2.base, http.MethodPost, "/api/groups/billing/heartbeat", `{"member_epoch":0,"topics":["orders"]}`)
	require.Equal(t, http.StatusMisdirectedRequest, status, body)
	e := errorOf(t, body)
	require.Equal(t, CodeNotCoordinator, e.Code)
	require.Equal(t, strings.TrimPrefix(n1.base, "http://"), e.Coordinator)

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
}
