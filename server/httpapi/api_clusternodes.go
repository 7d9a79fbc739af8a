package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/syntax"
)

// The nodes of a cluster-mode cluster: GET, POST /api/cluster/nodes and
// DELETE /api/cluster/nodes/{id} list the voters of the metadata group and
// add or remove one (clusternode.Node.AddNode, RemoveNode, forwarded to the
// group's leader). The embedded cluster lists none and refuses changes.

// MembershipTimeout bounds one change of the metadata group's voters: one
// that no majority commits in time (a majority of the nodes down) is 503,
// its outcome unknown. hashicorp/raft counts an added voter at once, in the
// majorities after the change: a single node commits the addition alone
// and then needs the new node for every decision, so a node must be
// running (PYSTREAM_JOIN=on) before it is added
// (TestClusterNodesAddBeforeTheNodeStarts).
const MembershipTimeout = 10 * time.Second

// handleClusterNodes answers GET /api/cluster/nodes.
func (a *API) handleClusterNodes(w http.ResponseWriter, r *http.Request) {
	res, ae := a.clusterNodes()
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// clusterNodes is the answer of every /api/cluster/nodes route: this
// node's view of the metadata group, or the embedded cluster's empty list.
func (a *API) clusterNodes() (apiclient.ClusterNodesResponse, *apiError) {
	if a.members == nil {
		return apiclient.ClusterNodesResponse{Mode: apiclient.ModeEmbedded, Nodes: []apiclient.ClusterNode{}}, nil
	}
	controller, nodes, err := a.members.ClusterNodes()
	if err != nil {
		return apiclient.ClusterNodesResponse{}, a.opError("list the cluster's nodes", err)
	}
	out := apiclient.ClusterNodesResponse{Mode: apiclient.ModeCluster, Controller: controller, Nodes: make([]apiclient.ClusterNode, len(nodes))}
	for i, n := range nodes {
		out.Nodes[i] = apiclient.ClusterNode{ID: n.ID, Addr: n.Addr, HTTPAddr: n.HTTPAddr, KafkaAddr: n.KafkaAddr, Voter: n.Voter, Leader: n.Leader}
	}
	return out, nil
}

// handleAddNode answers POST /api/cluster/nodes: node id, started with
// PYSTREAM_JOIN=on at addr, becomes a voter of the metadata group. The
// body is checked first, so a bad one is 400 in either mode.
func (a *API) handleAddNode(w http.ResponseWriter, r *http.Request) {
	req, ae := a.readAddNode(w, r)
	if ae == nil {
		ae = a.membershipChange(r.Context(), "add node", req.ID, func(ctx context.Context, views []backend.NodeView) error {
			if ae := addRefusal(views, req.ID, req.Addr); ae != nil {
				return ae
			}
			return a.members.AddNode(ctx, req.ID, req.Addr)
		})
	}
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	a.logger.Info("node added to the metadata group", "node", req.ID, "addr", req.Addr)
	a.handleClusterNodes(w, r)
}

// handleRemoveNode answers DELETE /api/cluster/nodes/{id}: the node leaves
// the metadata group. Its broker stays registered (clusternode.RemoveNode).
func (a *API) handleRemoveNode(w http.ResponseWriter, r *http.Request) {
	id, ae := nodeParam(r)
	if ae == nil {
		ae = a.noBody(w, r)
	}
	if ae == nil {
		ae = a.membershipChange(r.Context(), "remove node", id, func(ctx context.Context, views []backend.NodeView) error {
			if ae := removeRefusal(views, id); ae != nil {
				return ae
			}
			return a.members.RemoveNode(ctx, id)
		})
	}
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	a.logger.Info("node removed from the metadata group", "node", id)
	a.handleClusterNodes(w, r)
}

// membershipChange runs change with this node's view of the nodes, within
// MembershipTimeout; an embedded server has no nodes to change.
func (a *API) membershipChange(ctx context.Context, op string, id int, change func(context.Context, []backend.NodeView) error) *apiError {
	if a.members == nil {
		return newAPIError(http.StatusConflict, CodeConflict,
			"the embedded cluster has no nodes to add or remove: its brokers are part of this one server process "+
				"(cluster mode runs one process per node: PYSTREAM_NODE_ID and PYSTREAM_CLUSTER)")
	}
	_, views, err := a.members.ClusterNodes()
	if err != nil {
		return a.opError("list the cluster's nodes", err)
	}
	ctx, cancel := context.WithTimeout(ctx, MembershipTimeout)
	defer cancel()
	err = change(ctx, views)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"%s %d: the metadata group did not commit the change within %s; its outcome is unknown "+
				"(a change commits with a majority of the new configuration: is every node running?); GET /api/cluster/nodes shows the configuration",
			op, id, MembershipTimeout)
		e.cause = fmt.Errorf("%s %d: %w", op, id, err)
		return a.withUnavailable(e)
	}
	return a.opError(fmt.Sprintf("%s %d", op, id), err)
}

// addNodeBody is the body of POST /api/cluster/nodes as the server reads
// it: pointers, so that a missing field is told from a zero.
type addNodeBody struct {
	ID   *int    `json:"id"`
	Addr *string `json:"addr"`
}

// readAddNode reads and checks a POST /api/cluster/nodes body: id from 1
// to backend.MaxBrokers, addr a host:port.
func (a *API) readAddNode(w http.ResponseWriter, r *http.Request) (apiclient.AddNodeRequest, *apiError) {
	var body addNodeBody
	if ae := a.readJSON(w, r, &body); ae != nil {
		return apiclient.AddNodeRequest{}, ae
	}
	const addrRule = "host:port, the node's internal address (its entry in PYSTREAM_CLUSTER)"
	switch {
	case body.ID == nil:
		return apiclient.AddNodeRequest{}, badRequest("id is required (1 to %d)", backend.MaxBrokers)
	case *body.ID < 1 || *body.ID > backend.MaxBrokers:
		return apiclient.AddNodeRequest{}, badRequest("id %d: must be from 1 to %d", *body.ID, backend.MaxBrokers)
	case body.Addr == nil:
		return apiclient.AddNodeRequest{}, badRequest("addr is required (%s)", addrRule)
	case !syntax.ValidAddr(*body.Addr):
		return apiclient.AddNodeRequest{}, badRequest("addr %s: want %s", quoted(*body.Addr), addrRule)
	}
	return apiclient.AddNodeRequest{ID: *body.ID, Addr: *body.Addr}, nil
}

// nodeParam returns the {id} path wildcard of a node: a decimal integer
// from 1 to backend.MaxBrokers.
func nodeParam(r *http.Request) (int, *apiError) {
	v := r.PathValue("id")
	n, ok := parseIndex(v, 1)
	if !ok || n > backend.MaxBrokers {
		return 0, badRequest("invalid node id %s: a decimal integer from 1 to %d", quoted(v), backend.MaxBrokers)
	}
	return n, nil
}

// addRefusal refuses adding node id at addr when another voter has that
// address already (Raft refuses it too, less clearly); nil lets the change
// go ahead. Adding a voter again at a new address moves it.
func addRefusal(views []backend.NodeView, id int, addr string) *apiError {
	for _, v := range views {
		if v.Voter && v.ID != id && v.Addr == addr {
			return newAPIError(http.StatusConflict, CodeConflict, "addr %s is node %d's: each node has an internal address of its own", addr, v.ID)
		}
	}
	return nil
}

// removeRefusal refuses removing node id when it is not a voter (a typo
// would otherwise change nothing and succeed) or is the last one (the
// group could then never decide anything again); nil lets it go ahead.
func removeRefusal(views []backend.NodeView, id int) *apiError {
	voters, member := 0, false
	for _, v := range views {
		if v.Voter {
			voters++
			member = member || v.ID == id
		}
	}
	switch {
	case !member:
		return notFound("node %d is not a voter of the metadata group", id)
	case voters == 1:
		return newAPIError(http.StatusConflict, CodeConflict,
			"node %d is the last voter of the metadata group; removing it would leave no node to decide anything", id)
	}
	return nil
}
