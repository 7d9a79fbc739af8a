package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/clustertls"
	"github.com/pystream/pystream/server/raftmeta/rafttest"
)

// syncNodes is a cluster of cluster-mode servers in one test process:
// each node a whole Server (HTTP API, groups, node), its Raft on an
// in-memory Raft network, its internal API and its HTTP API on an
// in-memory network of pipes. It runs inside a testing/synctest bubble,
// where time is fake: waiting is for events, never for the wall clock.
type syncNodes struct {
	t *testing.T
	// raft carries the nodes' Raft messages, net their internal and HTTP
	// connections.
	raft *rafttest.Network
	net  *clustertest.Network
	// peers is every node's internal address; a node given join starts
	// with the peers up to its own id.
	peers ClusterList
	// certs holds the cluster's certificates (clustertls.WriteDir): every
	// node's internal API speaks mutual TLS, as `make cluster`'s do.
	certs string
	dirs  map[int]string
	nodes map[int]*running
}

// newSyncNodes names size nodes, 1..size, and starts none.
func newSyncNodes(t *testing.T, size int) *syncNodes {
	c := &syncNodes{t: t, raft: rafttest.NewNetwork(), net: clustertest.NewNetwork(), peers: ClusterList{},
		dirs: map[int]string{}, nodes: map[int]*running{}}
	for id := 1; id <= size; id++ {
		c.peers[id], c.dirs[id] = rafttest.Addr(id), t.TempDir()
	}
	// Made inside the test's bubble, the certificates are valid on its
	// fake clock. Enough for nodes started later with join.
	c.certs = t.TempDir()
	_, err := clustertls.WriteDir(c.certs, size+2, time.Now())
	require.NoError(t, err)
	return c
}

// httpAddr is node id's HTTP address on the in-memory network.
func (c *syncNodes) httpAddr(id int) string { return fmt.Sprintf("127.0.0.1:%d", 18080+id) }

// start opens node id on its data directory with the given peers (all of
// them when nil) and serves its HTTP API; join waits to be added.
func (c *syncNodes) start(id int, peers ClusterList, join bool, opts ...func(*Config)) *running {
	c.t.Helper()
	if peers == nil {
		peers = c.peers
	}
	cfg := Defaults()
	cfg.DataDir, cfg.LogLevel, cfg.KafkaPort = c.dirs[id], LogLevel(LevelError), 0
	cfg.NodeID, cfg.Cluster, cfg.Join = NodeID(id), peers, Switch(join)
	cfg.ClusterTLSCert = filepath.Join(c.certs, clustertls.NodeCertFile(id))
	cfg.ClusterTLSKey = filepath.Join(c.certs, clustertls.NodeKeyFile(id))
	cfg.ClusterTLSCa = filepath.Join(c.certs, clustertls.FileCACert)
	_, port, err := net.SplitHostPort(c.httpAddr(id))
	require.NoError(c.t, err)
	require.NoError(c.t, cfg.Port.Decode(port))
	for _, o := range opts {
		o(&cfg)
	}
	internal, err := c.net.Listen(c.peers[id])
	require.NoError(c.t, err)
	srv, err := newServer(cfg, NewLogger(io.Discard, cfg), durable.OS, func(s *Server) {
		s.nodeConfig = func(nc *clusternode.Config) {
			nc.Listener, nc.Dial, nc.RaftTransport = internal, c.net.Dialer(c.peers[id]), c.raft.Transport(id)
		}
	})
	if err != nil {
		_ = internal.Close()
	}
	require.NoError(c.t, err)
	ln, err := c.net.Listen(c.httpAddr(id))
	require.NoError(c.t, err)
	dial := c.net.Dialer("client")
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return dial(ctx, addr)
	}}}
	r := serveVia(c.t, srv, ln, hc)
	c.nodes[id] = r
	return r
}

// upTo is the peers 1..id: what a node started with join knows.
func (c *syncNodes) upTo(id int) ClusterList {
	out := ClusterList{}
	for i := 1; i <= id; i++ {
		out[i] = c.peers[i]
	}
	return out
}

// stop stops node id as SIGTERM does.
func (c *syncNodes) stop(id int) {
	c.nodes[id].stop()
	delete(c.nodes, id)
}

// await waits until cond holds, looking again whenever the metadata of a
// running node changes and at least every 10 ms of the bubble's fake
// time; after a minute of it, the test fails with what and cond's last
// answer.
func (c *syncNodes) await(what string, cond func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not after a minute: %s", what, why)
		}
		var changed []<-chan struct{}
		for _, r := range c.nodes {
			changed = append(changed, r.srv.node.Cluster().MetadataChanged())
		}
		clustertest.AwaitAny(changed, 10*time.Millisecond)
	}
}

// awaitNodes waits until node r answers GET /api/cluster/nodes with what
// ok accepts, and returns that answer.
func (c *syncNodes) awaitNodes(r *running, what string, ok func(*apiclient.ClusterNodesResponse) bool) *apiclient.ClusterNodesResponse {
	c.t.Helper()
	var res *apiclient.ClusterNodesResponse
	c.await(what, func() (bool, string) {
		var err error
		res, err = r.client.ClusterNodes(context.Background())
		if err != nil {
			return false, err.Error()
		}
		return ok(res), fmt.Sprintf("%+v", res)
	})
	return res
}

// awaitReady waits until every running node answers GET /api/ready 200.
func (c *syncNodes) awaitReady() {
	c.t.Helper()
	for id, r := range c.nodes {
		c.await(fmt.Sprintf("node %d ready", id), func() (bool, string) {
			if _, err := r.client.Ready(context.Background()); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	}
}
