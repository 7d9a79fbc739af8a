package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
)

// rawRequest sends method target with a JSON body (none when empty) and
// returns the status and the body.
func rawRequest(t *testing.T, base, method, target, body string) (int, string) {
	t.Helper()
	return rawRequestVia(t, http.DefaultClient, base, method, target, body)
}

// raw is rawRequest of r, through its client.
func (r *running) raw(t *testing.T, method, target, body string) (int, string) {
	t.Helper()
	return rawRequestVia(t, r.hc, r.base, method, target, body)
}

// rawRequestVia is rawRequest through hc.
func rawRequestVia(t *testing.T, hc *http.Client, base, method, target, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+target, rd)
	require.NoError(t, err)
	req.Header.Set(apiclient.IntentHeader, "1")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// badNodeRequests are requests of the node routes that are 400 in either
// mode: the request is checked before the mode is.
var badNodeRequests = []struct{ name, method, target, body string }{
	{"id 0", http.MethodPost, "/api/cluster/nodes", `{"id":0,"addr":"127.0.0.1:7009"}`},
	{"id 65", http.MethodPost, "/api/cluster/nodes", `{"id":65,"addr":"127.0.0.1:7009"}`},
	{"id missing", http.MethodPost, "/api/cluster/nodes", `{"addr":"127.0.0.1:7009"}`},
	{"id a string", http.MethodPost, "/api/cluster/nodes", `{"id":"2","addr":"127.0.0.1:7009"}`},
	{"addr without a port", http.MethodPost, "/api/cluster/nodes", `{"id":2,"addr":"127.0.0.1"}`},
	{"addr port 0", http.MethodPost, "/api/cluster/nodes", `{"id":2,"addr":"127.0.0.1:0"}`},
	{"addr port 65536", http.MethodPost, "/api/cluster/nodes", `{"id":2,"addr":"127.0.0.1:65536"}`},
	{"addr bad host", http.MethodPost, "/api/cluster/nodes", `{"id":2,"addr":"no_such host:7009"}`},
	{"addr missing", http.MethodPost, "/api/cluster/nodes", `{"id":2}`},
	{"unknown field", http.MethodPost, "/api/cluster/nodes", `{"id":2,"addr":"127.0.0.1:7009","voter":true}`},
	{"two values", http.MethodPost, "/api/cluster/nodes", `{"id":2,"addr":"127.0.0.1:7009"} {}`},
	{"DELETE id 0", http.MethodDelete, "/api/cluster/nodes/0", ""},
	{"DELETE id 65", http.MethodDelete, "/api/cluster/nodes/65", ""},
	{"DELETE id not a number", http.MethodDelete, "/api/cluster/nodes/two", ""},
	{"DELETE with a body", http.MethodDelete, "/api/cluster/nodes/2", `{}`},
}

// An embedded server lists no nodes and refuses to add or remove one with
// 409, after checking the request like cluster mode does.
func TestClusterNodesEmbedded(t *testing.T) {
	r := startServer(t, t.TempDir(), 3)
	status, body := rawRequest(t, r.base, http.MethodGet, "/api/cluster/nodes", "")
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, `{"mode":"embedded","controller":0,"nodes":[]}`, body)

	ctx := context.Background()
	_, err := r.client.AddNode(ctx, 4, "127.0.0.1:7004")
	e := apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Contains(t, e.Message, "the embedded cluster has no nodes to add or remove")
	_, err = r.client.RemoveNode(ctx, 2)
	e = apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Contains(t, e.Message, "the embedded cluster has no nodes to add or remove")

	for _, tc := range badNodeRequests {
		status, body := rawRequest(t, r.base, tc.method, tc.target, tc.body)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, body)
		require.Contains(t, body, `"code":"invalid_argument"`, tc.name)
	}
	// The brokers are untouched.
	res, err := r.client.Cluster(ctx)
	require.NoError(t, err)
	require.Len(t, res.Brokers, 3)
}

// A single-node cluster elects itself and lists itself as voter and
// controller, with the client address it registered.
func TestClusterNodesSingleNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newSyncNodes(t, 1)
		r := c.start(1, nil, false)
		res := c.awaitNodes(r, "node 1 leads and has registered", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller == 1 && len(res.Nodes) == 1 && res.Nodes[0].HTTPAddr != ""
		})
		require.Equal(t, &apiclient.ClusterNodesResponse{Mode: apiclient.ModeCluster, Controller: 1,
			Nodes: []apiclient.ClusterNode{{ID: 1, Addr: c.peers[1], HTTPAddr: c.httpAddr(1), Voter: true, Leader: true}}}, res)

		// Bad requests change nothing.
		for _, tc := range badNodeRequests {
			status, body := r.raw(t, tc.method, tc.target, tc.body)
			require.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, body)
		}
		after, err := r.client.ClusterNodes(context.Background())
		require.NoError(t, err)
		require.Equal(t, res, after)

		// The embedded cluster's operations that cluster mode does not offer
		// are 409 too (cluster.ErrBrokerIsProcess): a broker is a process.
		_, err = r.client.StopBroker(context.Background(), 1)
		e := apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
		require.Equal(t, "stop broker 1: stop its process instead: in cluster mode a broker is a process of its own", e.Message)
	})
}

// A node started with PYSTREAM_JOIN=on is added through the API, receives
// the metadata and registers; removed, it stops being a voter but its
// broker stays listed. The refusals change nothing.
func TestClusterNodesAddAndRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 2)
		addr1, addr2 := c.peers[1], c.peers[2]
		n1 := c.start(1, c.upTo(1), false)
		c.awaitNodes(n1, "node 1 leads", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller == 1 && len(res.Nodes) == 1 && res.Nodes[0].HTTPAddr != ""
		})
		n2 := c.start(2, c.upTo(2), true)

		// An address another voter has is refused before Raft is asked.
		_, err := n1.client.AddNode(ctx, 2, addr1)
		e := apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
		require.Equal(t, "addr "+addr1+" is node 1's: each node has an internal address of its own", e.Message)
		// So are removing a node that is not a voter, and the last voter.
		_, err = n1.client.RemoveNode(ctx, 2)
		e = apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
		require.Equal(t, "node 2 is not a voter of the metadata group", e.Message)
		_, err = n1.client.RemoveNode(ctx, 1)
		apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)

		res, err := n1.client.AddNode(ctx, 2, addr2)
		require.NoError(t, err)
		require.Equal(t, apiclient.ModeCluster, res.Mode)
		require.Equal(t, []int{1, 2}, nodeIDs(res.Nodes))
		require.True(t, res.Nodes[1].Voter, "the answer lists the new voter")

		want := &apiclient.ClusterNodesResponse{Mode: apiclient.ModeCluster, Controller: 1, Nodes: []apiclient.ClusterNode{
			{ID: 1, Addr: addr1, HTTPAddr: c.httpAddr(1), Voter: true, Leader: true},
			{ID: 2, Addr: addr2, HTTPAddr: c.httpAddr(2), Voter: true}}}
		registered := func(res *apiclient.ClusterNodesResponse) bool {
			return len(res.Nodes) == 2 && res.Nodes[1].HTTPAddr != ""
		}
		require.Equal(t, want, c.awaitNodes(n1, "node 2 registers", registered))
		require.Equal(t, want, c.awaitNodes(n2, "node 2 learns the metadata", registered), "the new node sees the same")

		res, err = n1.client.RemoveNode(ctx, 2)
		require.NoError(t, err)
		want.Nodes[1].Voter = false
		require.Equal(t, want, res, "node 2's broker stays registered, no longer a voter")
		got, err := n1.client.ClusterNodes(ctx)
		require.NoError(t, err)
		require.Equal(t, want, got)

		// Node 1, alone again, still decides: a topic can be created.
		_, _, err = n1.client.CreateTopic(ctx, "orders", 1, 1)
		require.NoError(t, err)
	})
}

func nodeIDs(nodes []apiclient.ClusterNode) []int {
	ids := make([]int, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	return ids
}

// A node that does not answer is not added: as a voter it would count
// against the majority at once (two voters, one silent: nothing more
// could be committed). The refusal changes nothing; once the node runs
// with PYSTREAM_JOIN=on, the same request adds it.
func TestClusterNodesAddBeforeTheNodeStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 2)
		n1 := c.start(1, c.upTo(1), false)
		c.awaitNodes(n1, "node 1 leads", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller == 1 && len(res.Nodes) == 1 && res.Nodes[0].HTTPAddr != ""
		})

		_, err := n1.client.AddNode(ctx, 2, c.peers[2])
		e := apitest.APIErr(t, err, http.StatusBadRequest, apiclient.CodeInvalidArgument)
		require.Contains(t, e.Message, "does not answer")
		res, err := n1.client.ClusterNodes(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, res.Controller, "node 1 still leads")
		require.Equal(t, []int{1}, nodeIDs(res.Nodes))

		c.start(2, c.upTo(2), true)
		res, err = n1.client.AddNode(ctx, 2, c.peers[2])
		require.NoError(t, err)
		require.Equal(t, []int{1, 2}, nodeIDs(res.Nodes))
		c.awaitNodes(n1, "node 2 registered", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller != 0 && len(res.Nodes) == 2 && res.Nodes[1].HTTPAddr == c.httpAddr(2)
		})
	})
}
