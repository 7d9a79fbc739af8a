package raftmeta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/netmux"
	"github.com/pystream/pystream/server/raftmeta/rafttest"
)

// errTestRefused is the refusal of listFSM for a command starting with
// "refuse".
var errTestRefused = errors.New("listfsm: refused")

// listFSM is the test state machine: the list of commands applied, in
// order. A command starting with "refuse" is refused. It is safe for
// concurrent use, so tests can read it while Raft applies.
type listFSM struct {
	// mu guards the fields below.
	mu       sync.Mutex
	entries  []string
	restores int
}

var _ StateMachine = (*listFSM)(nil)

func (f *listFSM) Apply(index uint64, cmd []byte) ([]byte, error) {
	if strings.HasPrefix(string(cmd), "refuse") {
		return nil, fmt.Errorf("command %q: %w", cmd, errTestRefused)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = append(f.entries, string(cmd))
	return fmt.Appendf(nil, "%s#%d", cmd, len(f.entries)), nil
}

func (f *listFSM) Snapshot() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return json.Marshal(f.entries)
}

func (f *listFSM) Restore(data []byte) error {
	var entries []string
	if err := json.Unmarshal(data, &entries); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = entries
	f.restores++
	return nil
}

func (f *listFSM) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.entries)
}

func (f *listFSM) restoreCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restores
}

// testLogger discards logs unless RAFTMETA_TEST_LOG is set; Raft's
// goroutines may log after a test ends, so t.Log is no place for them.
func testLogger() *slog.Logger {
	if os.Getenv("RAFTMETA_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testNode is one node "process": its internal port (a netmux over a
// loopback listener, or a transport on the cluster's in-memory network),
// its Raft directory and its state machine.
type testNode struct {
	id   int
	addr string
	dir  string
	mux  *netmux.Mux // nil on an in-memory network
	fsm  *listFSM
	node *Node
}

// testCluster is a set of nodes; every running node is stopped at the end
// of the test.
type testCluster struct {
	t     *testing.T
	nodes map[int]*testNode
	// tune, when set, changes each node's Config before Open.
	tune func(*Config)
	// network, when set, carries Raft in memory instead of over loopback
	// TCP; see newInmemCluster.
	network *rafttest.Network
}

// newTestCluster opens size nodes that bootstrap together and waits for a
// leader.
func newTestCluster(t *testing.T, size int, tune func(*Config)) *testCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of nodes and waits for elections: it runs in make test's workspace pass (with the race detector), not under -short")
	}
	c := &testCluster{t: t, nodes: make(map[int]*testNode), tune: tune}
	t.Cleanup(c.stopAll)
	peers := make(map[int]string)
	listeners := make(map[int]net.Listener)
	for id := 1; id <= size; id++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		listeners[id] = l
		peers[id] = l.Addr().String()
	}
	for id := 1; id <= size; id++ {
		c.nodes[id] = &testNode{id: id, addr: peers[id], dir: filepath.Join(t.TempDir(), fmt.Sprint(id))}
		c.start(c.nodes[id], listeners[id], peers, false)
	}
	c.waitLeader(5 * time.Second)
	return c
}

// newInmemCluster opens size nodes on an in-memory network
// (rafttest.Network), bootstrapped together, and waits for a leader. Call
// it inside a synctest bubble: every wait of the cluster's helpers is then
// on the bubble's fake clock.
func newInmemCluster(t *testing.T, size int, tune func(*Config)) *testCluster {
	t.Helper()
	c := &testCluster{t: t, nodes: make(map[int]*testNode), tune: tune, network: rafttest.NewNetwork()}
	t.Cleanup(c.stopAll)
	var ids []int
	for id := 1; id <= size; id++ {
		ids = append(ids, id)
	}
	peers := c.network.Peers(ids...)
	for _, id := range ids {
		c.nodes[id] = &testNode{id: id, addr: rafttest.Addr(id), dir: filepath.Join(t.TempDir(), fmt.Sprint(id))}
		c.start(c.nodes[id], nil, peers, false)
	}
	c.waitLeader(5 * time.Second)
	return c
}

// start opens n's node with a fresh state machine: on the in-memory
// network with a fresh transport, or on the loopback listener l.
func (c *testCluster) start(n *testNode, l net.Listener, peers map[int]string, join bool) {
	c.t.Helper()
	n.fsm = &listFSM{}
	cfg := Config{
		ID:     n.id,
		Dir:    n.dir,
		Peers:  peers,
		Join:   join,
		FSM:    n.fsm,
		Logger: testLogger().With("node", n.id),
	}
	if c.network != nil {
		cfg.Transport = c.network.Transport(n.id)
	} else {
		if l == nil {
			c.t.Fatalf("node %d on loopback: start needs its listener", n.id)
		}
		n.mux = netmux.New(l)
		cfg.Listener = n.mux.Listener(netmux.KindRaft)
		go n.mux.Serve()
		cfg.Dial = netmux.Dialer(netmux.KindRaft)
		cfg.Advertise = n.addr
	}
	if c.tune != nil {
		c.tune(&cfg)
	}
	node, err := Open(cfg)
	require.NoError(c.t, err)
	n.node = node
}

// stop closes n's node and its port, like a process exiting.
func (c *testCluster) stop(n *testNode) {
	c.t.Helper()
	if n.node == nil {
		return
	}
	require.NoError(c.t, n.node.Close())
	if n.mux != nil {
		require.NoError(c.t, n.mux.Close())
	}
	n.node = nil
}

func (c *testCluster) stopAll() {
	for _, n := range c.nodes {
		c.stop(n)
	}
}

// running returns the nodes that are up, by id.
func (c *testCluster) running() []*testNode {
	var out []*testNode
	for id := 1; id <= len(c.nodes)+10; id++ {
		if n, ok := c.nodes[id]; ok && n.node != nil {
			out = append(out, n)
		}
	}
	return out
}

// waitLeader waits until exactly one running node is the leader and every
// running node names it, and returns it.
func (c *testCluster) waitLeader(within time.Duration) *testNode {
	c.t.Helper()
	return c.waitLeaderAmong(within, c.running())
}

// waitLeaderAmong waits until exactly one of nodes is the leader and
// every one of them names it, and returns it.
func (c *testCluster) waitLeaderAmong(within time.Duration, nodes []*testNode) *testNode {
	c.t.Helper()
	var leader *testNode
	eventually(c.t, within, func() bool {
		leader = nil
		for _, n := range nodes {
			if n.node.IsLeader() {
				if leader != nil {
					return false
				}
				leader = n
			}
		}
		if leader == nil {
			return false
		}
		for _, n := range nodes {
			if id, addr := n.node.Leader(); id != leader.id || addr != leader.addr {
				return false
			}
		}
		return true
	}, "no single leader that every node names")
	return leader
}

// waitConverged waits until every running node's state machine holds
// want.
func (c *testCluster) waitConverged(want []string) {
	c.t.Helper()
	c.waitConvergedAmong(want, c.running())
}

// waitConvergedAmong waits until the state machine of each of nodes holds
// want.
func (c *testCluster) waitConvergedAmong(want []string, nodes []*testNode) {
	c.t.Helper()
	eventually(c.t, 5*time.Second, func() bool {
		for _, n := range nodes {
			if !slices.Equal(n.fsm.list(), want) {
				return false
			}
		}
		return true
	}, "state machines did not converge on %d entries", len(want))
}

// applyN applies n commands named prefix-i on node and returns them.
func applyN(t *testing.T, node *Node, prefix string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var cmds []string
	for i := range n {
		cmd := fmt.Sprintf("%s-%d", prefix, i)
		_, err := node.Apply(ctx, []byte(cmd))
		require.NoError(t, err)
		cmds = append(cmds, cmd)
	}
	return cmds
}

// eventually polls cond every 10 ms until it holds or within passes. In a
// synctest bubble both are on the fake clock: each sleep returns once every
// other goroutine of the bubble is blocked, so no real time passes.
func eventually(t *testing.T, within time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(msg, args...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serverIDString is a raft.ServerID of any text.
func serverIDString(s string) raft.ServerID { return raft.ServerID(s) }
