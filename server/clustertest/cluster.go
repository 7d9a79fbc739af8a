package clustertest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/raftmeta/rafttest"
)

// DefaultFailoverAfter is every node's failover delay unless Options say
// otherwise.
const DefaultFailoverAfter = time.Second

// Options shape a Cluster.
type Options struct {
	// FailoverAfter is every node's clusternode.Config.FailoverAfter;
	// zero is DefaultFailoverAfter, negative is 0 (the manual mode).
	FailoverAfter time.Duration
	// Configure, when set, adjusts each node's configuration before it
	// opens.
	Configure func(cfg *clusternode.Config)
}

// Cluster is a cluster of clusternode Nodes in one process, on in-memory
// networks. It is safe for use by one test goroutine.
type Cluster struct {
	t testing.TB
	// Raft is the network of the nodes' Raft transports, Net that of their
	// internal APIs; both use the addresses rafttest.Addr gives.
	Raft  *rafttest.Network
	Net   *Network
	opts  Options
	peers map[int]string
	nodes map[int]*node
}

// node is one node "process": its data directory and, while it runs, its
// Node.
type node struct {
	id  int
	dir string
	n   *clusternode.Node
}

// Start opens size nodes that bootstrap together and waits until every one
// of them lists every one registered, every node ready. It must run inside
// a synctest bubble. The nodes are closed when the test ends.
func Start(t testing.TB, size int, opts Options) *Cluster {
	t.Helper()
	if opts.FailoverAfter == 0 {
		opts.FailoverAfter = DefaultFailoverAfter
	} else if opts.FailoverAfter < 0 {
		opts.FailoverAfter = 0
	}
	c := &Cluster{t: t, Raft: rafttest.NewNetwork(), Net: NewNetwork(), opts: opts, nodes: map[int]*node{}}
	ids := make([]int, size)
	for i := range ids {
		ids[i] = i + 1
	}
	c.peers = c.Raft.Peers(ids...)
	for _, id := range ids {
		c.nodes[id] = &node{id: id, dir: t.TempDir()}
	}
	t.Cleanup(c.Close)
	for _, id := range ids {
		c.Restart(id)
	}
	c.AwaitReady()
	c.Await("every node lists every node registered", func() (bool, string) {
		for _, id := range ids {
			if n := len(c.Via(id).Brokers()); n != size {
				return false, fmt.Sprintf("node %d lists %d brokers", id, n)
			}
		}
		return true, ""
	})
	return c
}

// Addr is node id's address on both networks.
func (c *Cluster) Addr(id int) string { return c.peers[id] }

// IDs lists the nodes, running or not, ascending.
func (c *Cluster) IDs() []int {
	var out []int
	for id := range c.nodes {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Running lists the running nodes' ids, ascending.
func (c *Cluster) Running() []int {
	var out []int
	for _, id := range c.IDs() {
		if c.nodes[id].n != nil {
			out = append(out, id)
		}
	}
	return out
}

// Node is node id's running Node.
func (c *Cluster) Node(id int) *clusternode.Node {
	c.t.Helper()
	n := c.nodes[id].n
	if n == nil {
		c.t.Fatalf("clustertest: node %d is not running", id)
	}
	return n
}

// Via is node id's cluster.Cluster: what its HTTP API and Kafka listener
// serve.
func (c *Cluster) Via(id int) *cluster.Cluster { return c.Node(id).Cluster() }

// Dir is node id's data directory.
func (c *Cluster) Dir(id int) string { return c.nodes[id].dir }

// logger discards the nodes' logs unless CLUSTERTEST_LOG is set.
func logger() *slog.Logger {
	if os.Getenv("CLUSTERTEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Restart opens node id on its data directory (its first start when it
// never ran).
func (c *Cluster) Restart(id int) {
	c.t.Helper()
	nd := c.nodes[id]
	if nd.n != nil {
		c.t.Fatalf("clustertest: node %d is running", id)
	}
	addr := c.peers[id]
	ln, err := c.Net.Listen(addr)
	if err != nil {
		c.t.Fatal(err)
	}
	cfg := clusternode.Config{ID: id, Peers: c.peers, DataDir: nd.dir, HTTPAddr: fmt.Sprintf("127.0.0.1:%d", 18000+id),
		FailoverAfter: c.opts.FailoverAfter, Listener: ln, Dial: c.Net.Dialer(addr), RaftTransport: c.Raft.Transport(id),
		Logger: logger().With("node", id)}
	if c.opts.Configure != nil {
		c.opts.Configure(&cfg)
	}
	n, err := clusternode.Open(cfg)
	if err != nil {
		_ = ln.Close()
		c.t.Fatalf("clustertest: open node %d: %v", id, err)
	}
	nd.n = n
}

// Stop closes node id: to the others, a process that stopped.
func (c *Cluster) Stop(id int) {
	c.t.Helper()
	nd := c.nodes[id]
	if nd.n == nil {
		c.t.Fatalf("clustertest: node %d is not running", id)
	}
	err := nd.n.Close()
	nd.n = nil
	if err != nil {
		c.t.Errorf("clustertest: close node %d: %v", id, err)
	}
}

// Close stops every running node.
func (c *Cluster) Close() {
	for _, id := range c.Running() {
		c.Stop(id)
	}
}

// Isolate cuts node id off from every other, on both networks.
func (c *Cluster) Isolate(id int) {
	c.Raft.Isolate(id)
	c.Net.Isolate(c.peers[id])
}

// Cut breaks the links between nodes a and b, on both networks.
func (c *Cluster) Cut(a, b int) {
	c.Raft.Cut(a, b)
	c.Net.Cut(c.peers[a], c.peers[b])
}

// Hold holds the link between nodes a and b on the internal API's
// network (Network.Hold): their requests to each other hang instead of
// failing. Raft's messages between them still flow (rafttest cuts, but
// does not hold).
func (c *Cluster) Hold(a, b int) {
	c.Net.Hold(c.peers[a], c.peers[b])
}

// Heal undoes every cut and hold.
func (c *Cluster) Heal() {
	c.Raft.Heal()
	c.Net.Heal()
}

// Controller is the node that every running node names as the
// metadata group's leader; 0 while they disagree or know none.
func (c *Cluster) Controller() int {
	leader := -1
	for _, id := range c.Running() {
		got := c.nodes[id].n.Controller()
		if leader != -1 && got != leader {
			return 0
		}
		leader = got
	}
	return max(leader, 0)
}

// AwaitTimeout bounds every Await of a Cluster, in the bubble's fake time.
const AwaitTimeout = 60 * time.Second

// Await waits until cond holds, looking again whenever the metadata of
// any running node changes and at least every tick of fake time; it fails
// the test with what after AwaitTimeout. cond returns why not when it
// does not hold.
func (c *Cluster) Await(what string, cond func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(AwaitTimeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("clustertest: %s: not after %s: %s", what, AwaitTimeout, why)
		}
		var changed []<-chan struct{}
		for _, id := range c.Running() {
			changed = append(changed, c.nodes[id].n.Cluster().MetadataChanged())
		}
		AwaitAny(changed, 10*time.Millisecond)
	}
}

// AwaitAny returns when one of chans is closed or after d.
func AwaitAny(chans []<-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	done := make(chan struct{})
	defer close(done)
	woken := make(chan struct{}, 1)
	for _, ch := range chans {
		go func() {
			select {
			case <-ch:
				select {
				case woken <- struct{}{}:
				default:
				}
			case <-done:
			}
		}()
	}
	select {
	case <-woken:
	case <-t.C:
	}
}

// AwaitReady waits until every running node is ready: registered,
// applied up to its registration, and the controller finds every
// partition led and every replica open.
func (c *Cluster) AwaitReady() {
	c.t.Helper()
	c.Await("every running node ready", func() (bool, string) {
		for _, id := range c.Running() {
			if ok, why := c.nodes[id].n.Ready(); !ok {
				return false, fmt.Sprintf("node %d: %v", id, why)
			}
		}
		if c.Controller() == 0 {
			return false, "the nodes do not agree on a controller"
		}
		return true, ""
	})
}

// Ctx is a context for one call to the cluster, ending with the test.
func (c *Cluster) Ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), AwaitTimeout)
	c.t.Cleanup(cancel)
	return ctx
}
