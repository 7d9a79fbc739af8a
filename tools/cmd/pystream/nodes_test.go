package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/stretchr/testify/require"
)

// startNode runs a cluster-mode server: node id of peers (id=host:port,...),
// with PYSTREAM_JOIN=on when join, and more environment. It returns the
// server's URL.
func startNode(t *testing.T, id int, peers string, join bool, more ...string) string {
	t.Helper()
	env := append([]string{fmt.Sprintf("PYSTREAM_NODE_ID=%d", id), "PYSTREAM_CLUSTER=" + peers}, more...)
	if join {
		env = append(env, "PYSTREAM_JOIN=on")
	}
	url, _ := startServerAt(t, t.TempDir(), freePort(t), 1, env...)
	return url
}

// waitClusterNodes polls cluster nodes --json until ok accepts the answer.
func waitClusterNodes(t *testing.T, url, what string, ok func(apiclient.ClusterNodesResponse) bool) {
	t.Helper()
	var last result
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		last = pys(t, url, "", "cluster", "nodes", "--json")
		var res apiclient.ClusterNodesResponse
		if last.code == 0 && json.Unmarshal([]byte(last.stdout), &res) == nil && ok(res) {
			return
		}
	}
	t.Fatalf("%s: last answer %+v", what, last)
}

// docs/cli.md, cluster nodes: a node started with PYSTREAM_JOIN=on is added
// with add-node, listed by cluster nodes once registered (with its Kafka
// listener's address, "-" for a node that serves none), and removed with
// remove-node (its broker stays listed, no longer a voter).
func TestCLIClusterNodes(t *testing.T) {
	addr1, addr2 := fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	kport := freePort(t)
	kafka1 := fmt.Sprintf("127.0.0.1:%d", kport)
	url1 := startNode(t, 1, "1="+addr1, false, fmt.Sprintf("PYSTREAM_KAFKA_PORT=%d", kport))
	http1 := strings.TrimPrefix(url1, "http://")
	waitClusterNodes(t, url1, "node 1 leads", func(res apiclient.ClusterNodesResponse) bool {
		return res.Controller == 1 && len(res.Nodes) == 1 && res.Nodes[0].HTTPAddr != ""
	})
	r := ok(t, url1, "", "cluster", "nodes")
	require.Equal(t, [][]string{{"ID", "ADDR", "HTTP-ADDR", "KAFKA-ADDR", "VOTER", "CONTROLLER"}, {"1", addr1, http1, kafka1, "yes", "yes"}}, tableCells(r.stdout))

	url2 := startNode(t, 2, "1="+addr1+",2="+addr2, true)
	http2 := strings.TrimPrefix(url2, "http://")
	r = ok(t, url1, "", "cluster", "add-node", "2", addr2)
	require.Equal(t, "node 2 added at "+addr2+" (voters 1,2, controller 1)\n", r.stdout)
	waitClusterNodes(t, url1, "node 2 registers", func(res apiclient.ClusterNodesResponse) bool {
		return len(res.Nodes) == 2 && res.Nodes[1].HTTPAddr != ""
	})
	r = ok(t, url1, "", "cluster", "nodes")
	require.Equal(t, [][]string{{"ID", "ADDR", "HTTP-ADDR", "KAFKA-ADDR", "VOTER", "CONTROLLER"},
		{"1", addr1, http1, kafka1, "yes", "yes"}, {"2", addr2, http2, "-", "yes", "no"}}, tableCells(r.stdout))

	// Refusals exit 1 with the server's message; nothing changes.
	r = pys(t, url1, "", "cluster", "remove-node", "3")
	require.Equal(t, 1, r.code)
	require.Equal(t, "pystream: cluster remove-node 3: node 3 is not a voter of the metadata group [not_found]\n", r.stderr)
	r = pys(t, url1, "", "cluster", "add-node", "3", "127.0.0.1")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "pystream: cluster add-node 3 127.0.0.1: addr \"127.0.0.1\": want host:port")
	require.Contains(t, r.stderr, "[invalid_argument]")

	r = ok(t, url1, "", "cluster", "remove-node", "2", "--json")
	var res apiclient.ClusterNodesResponse
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	require.Equal(t, apiclient.ClusterNodesResponse{Mode: apiclient.ModeCluster, Controller: 1, Nodes: []apiclient.ClusterNode{
		{ID: 1, Addr: addr1, HTTPAddr: http1, KafkaAddr: kafka1, Voter: true, Leader: true},
		{ID: 2, Addr: addr2, HTTPAddr: http2, Voter: false}}}, res)
	r = ok(t, url1, "", "cluster", "nodes")
	require.Equal(t, []string{"2", addr2, http2, "-", "no", "no"}, tableCells(r.stdout)[2])

	// Added again and removed again, in text.
	r = ok(t, url1, "", "cluster", "add-node", "2", addr2, "--json")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	require.True(t, res.Nodes[1].Voter)
	r = ok(t, url1, "", "cluster", "remove-node", "2")
	require.Equal(t, "node 2 removed from the metadata group (voters 1, controller 1)\n", r.stdout)
}

// docs/cli.md, cluster nodes: an embedded server has no nodes; add-node
// and remove-node are refused with the server's conflict (exit 1).
func TestCLIClusterNodesEmbedded(t *testing.T) {
	url := startServer(t, 3)
	r := ok(t, url, "", "cluster", "nodes")
	require.Equal(t, "the server runs the embedded cluster: it has no nodes (pystream cluster status lists its brokers)\n", r.stdout)
	r = ok(t, url, "", "cluster", "nodes", "--json")
	require.JSONEq(t, `{"mode":"embedded","controller":0,"nodes":[]}`, r.stdout)

	const refusal = "the embedded cluster has no nodes to add or remove: its brokers are part of this one server process " +
		"(cluster mode runs one process per node: PYSTREAM_NODE_ID and PYSTREAM_CLUSTER) [conflict]\n"
	r = pys(t, url, "", "cluster", "add-node", "4", "127.0.0.1:7004")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stdout)
	require.Equal(t, "pystream: cluster add-node 4 127.0.0.1:7004: "+refusal, r.stderr)
	r = pys(t, url, "", "cluster", "remove-node", "2")
	require.Equal(t, 1, r.code)
	require.Equal(t, "pystream: cluster remove-node 2: "+refusal, r.stderr)
}

// tableCells splits a table the CLI printed into its cells, line by line
// (the column widths depend on the values).
func tableCells(out string) [][]string {
	var cells [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cells = append(cells, strings.Fields(line))
	}
	return cells
}
