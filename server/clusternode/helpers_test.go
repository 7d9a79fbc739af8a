package clusternode

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
)

// The test fixtures: several Nodes in one test process, each with its own
// data directory and a loopback listener, as separate processes would be.

// testFailoverAfter is every test node's failover delay.
const testFailoverAfter = time.Second

// waitLong bounds a wait for something that needs an election, a
// registration or a failover: generous, because the machine running the
// tests may be busy (two cores under -race).
const waitLong = 30 * time.Second

// testLogger discards logs unless CLUSTERNODE_TEST_LOG is set; the nodes'
// goroutines may log after a test ends, so t.Log is no place for them.
func testLogger() *slog.Logger {
	if os.Getenv("CLUSTERNODE_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testNode is one broker "process": its data directory, its internal
// address and, while it runs, its Node.
type testNode struct {
	id   int
	addr string
	dir  string
	node *Node // nil while stopped
}

// testCluster is a cluster of testNodes; every running node is closed at
// the end of the test.
type testCluster struct {
	t     *testing.T
	peers map[int]string
	nodes map[int]*testNode
	// failoverAfter is every node's Config.FailoverAfter.
	failoverAfter time.Duration
}

// newTestCluster opens size nodes that bootstrap together and waits until
// every one of them sees all of them registered.
func newTestCluster(t *testing.T, size int) *testCluster {
	t.Helper()
	return newTestClusterFailingOverAfter(t, size, testFailoverAfter)
}

// newTestClusterFailingOverAfter is newTestCluster with every node's
// failover delay d.
func newTestClusterFailingOverAfter(t *testing.T, size int, d time.Duration) *testCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of nodes and waits for elections: it runs in make test's workspace pass (with the race detector), not under -short")
	}
	c := &testCluster{t: t, peers: map[int]string{}, nodes: map[int]*testNode{}, failoverAfter: d}
	listeners := map[int]net.Listener{}
	for id := 1; id <= size; id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() }) // when Open did not take it
		listeners[id] = ln
		c.peers[id] = ln.Addr().String()
		c.nodes[id] = &testNode{id: id, addr: ln.Addr().String(), dir: t.TempDir()}
	}
	// Registered after the directories' removal, so run before it.
	t.Cleanup(c.closeAll)
	for id := 1; id <= size; id++ {
		c.open(id, listeners[id])
	}
	c.waitRegistered()
	return c
}

// open starts node id on ln.
func (c *testCluster) open(id int, ln net.Listener) {
	c.t.Helper()
	tn := c.nodes[id]
	n, err := Open(Config{ID: id, Peers: c.peers, DataDir: tn.dir, HTTPAddr: fmt.Sprintf("127.0.0.1:%d", 18000+id),
		FailoverAfter: c.failoverAfter, Listener: ln, Logger: testLogger()})
	if err != nil {
		_ = ln.Close()
	}
	require.NoError(c.t, err, "open node %d", id)
	tn.node = n
}

// stop closes node id: to the others, a crash.
func (c *testCluster) stop(id int) {
	c.t.Helper()
	tn := c.nodes[id]
	require.NotNil(c.t, tn.node, "node %d is not running", id)
	require.NoError(c.t, tn.node.Close())
	tn.node = nil
}

// restart opens node id again on its data directory and address. The
// port was ours a moment ago; listening again is retried briefly in case
// the kernel has not let it go yet.
func (c *testCluster) restart(id int) {
	c.t.Helper()
	tn := c.nodes[id]
	require.Nil(c.t, tn.node, "node %d is running", id)
	var ln net.Listener
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if ln, err = net.Listen("tcp", tn.addr); err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(c.t, err, "listen again on %s", tn.addr)
	c.open(id, ln)
}

func (c *testCluster) closeAll() {
	for _, tn := range c.nodes {
		if tn.node != nil {
			if err := tn.node.Close(); err != nil {
				c.t.Errorf("close node %d: %v", tn.id, err)
			}
			tn.node = nil
		}
	}
}

// node is the running Node of id.
func (c *testCluster) node(id int) *Node {
	c.t.Helper()
	n := c.nodes[id].node
	require.NotNil(c.t, n, "node %d is not running", id)
	return n
}

// running lists the running nodes by id.
func (c *testCluster) running() []*Node {
	var out []*Node
	for id := 1; id <= len(c.nodes); id++ {
		if n := c.nodes[id].node; n != nil {
			out = append(out, n)
		}
	}
	return out
}

// waitRegistered waits until every running node lists every node of the
// cluster as registered at its own address.
func (c *testCluster) waitRegistered() {
	c.t.Helper()
	waitFor(c.t, waitLong, "every node registered on every node", func() (bool, string) {
		for _, n := range c.running() {
			nodes := n.Nodes()
			if len(nodes) != len(c.nodes) {
				return false, fmt.Sprintf("node %d lists %v", n.ID(), nodes)
			}
			for _, info := range nodes {
				if info.Addr != c.peers[info.ID] {
					return false, fmt.Sprintf("node %d lists %v", n.ID(), nodes)
				}
			}
		}
		return true, ""
	})
}

// controller is the id of the node that leads the metadata group, as the
// running nodes agree on it; 0 while they do not.
func (c *testCluster) controller() int {
	leader := -1
	for _, n := range c.running() {
		id, _ := n.raft.Leader()
		if leader != -1 && id != leader {
			return 0
		}
		leader = id
	}
	return max(leader, 0)
}

// follower is a running node that does not lead the metadata group, once
// the running nodes agree on a leader.
func (c *testCluster) follower() *Node {
	c.t.Helper()
	var leader int
	waitFor(c.t, waitLong, "a metadata leader every node agrees on", func() (bool, string) {
		leader = c.controller()
		return leader != 0, ""
	})
	for _, n := range c.running() {
		if n.ID() != leader {
			return n
		}
	}
	c.t.Fatal("no running node follows the metadata leader")
	return nil
}

// createTopic creates a topic through node via and waits until every
// running node has applied it.
func (c *testCluster) createTopic(via *Node, name string, partitions, rf int) {
	c.t.Helper()
	require.NoError(c.t, via.CreateTopic(name, partitions, rf))
	waitFor(c.t, waitLong, "every node knows topic "+name, func() (bool, string) {
		for _, n := range c.running() {
			if _, err := n.Topic(name); err != nil {
				return false, fmt.Sprintf("node %d: %v", n.ID(), err)
			}
		}
		return true, ""
	})
}

// partition is a partition's metadata as node n has applied it.
func partitionOf(t *testing.T, n *Node, topicName string, partition int) cluster.PartitionMetadata {
	t.Helper()
	pm, err := n.fsm.partition(topicName, partition)
	require.NoError(t, err)
	return pm
}

// waitFor is logtest.WaitFor.
var waitFor = logtest.WaitFor

// scanLog reads every record of the log file at path without changing it.
func scanLog(t *testing.T, dir string) []log.Record {
	t.Helper()
	var out []log.Record
	require.NoError(t, segment.ScanDir(dir, log.Options{}, func(_ segment.SegmentInfo, _ int64, rec log.Record) error {
		out = append(out, rec)
		return nil
	}))
	return out
}

// replicaLog reads node id's own replica log of a partition from disk.
func (c *testCluster) replicaLog(id int, topicName string, partition int) []log.Record {
	c.t.Helper()
	return scanLog(c.t, cluster.ReplicaDir(c.nodes[id].dir, id, topicName, partition))
}

// readAll reads a partition's committed records through n.
func readAll(t *testing.T, n *Node, topicName string, partition int) []log.Record {
	t.Helper()
	var out []log.Record
	for at := uint64(0); ; {
		recs, err := n.ReadCommitted(topicName, partition, at, 100)
		require.NoError(t, err, "read %s/%d from %d through node %d", topicName, partition, at, n.ID())
		if len(recs) == 0 {
			return out
		}
		out = append(out, recs...)
		at += uint64(len(recs))
		require.Less(t, len(out), 100000, "a read that does not end")
	}
}

// payloads are the records' payloads, as strings.
func payloads(recs []log.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
	}
	return out
}

// sameRecords asserts two runs of records equal: offsets, timestamps and
// payloads.
func sameRecords(t *testing.T, want, got []log.Record, msgAndArgs ...any) {
	t.Helper()
	eq := slices.EqualFunc(want, got, func(a, b log.Record) bool {
		return a.Offset == b.Offset && a.Timestamp == b.Timestamp && string(a.Payload) == string(b.Payload)
	})
	if !eq {
		require.Fail(t, fmt.Sprintf("records differ:\nwant %v\n got %v", describe(want), describe(got)), msgAndArgs...)
	}
}

func describe(recs []log.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d@%d:%q", r.Offset, r.Timestamp, r.Payload)
	}
	return out
}
