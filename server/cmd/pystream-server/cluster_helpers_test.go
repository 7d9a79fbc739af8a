package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/faultnet"
)

// This file is a harness for cluster mode as it runs in production: three
// pystream-server processes on loopback, each one broker and one Raft
// voter, started, stopped, killed, paused and restarted on their data
// directories by the test, optionally with a TCP proxy on every link
// between two nodes so that a test can cut the network. Every process is
// killed when the test ends; a failed test keeps every node's log in a
// directory it names, and prints the end of each (PYSTREAM_TEST_KEEP_LOGS=1
// keeps them after a pass too).

// clusterSize is the number of nodes of a test cluster.
const clusterSize = 3

// clusterOptions configures a test cluster.
type clusterOptions struct {
	// failoverAfter is PYSTREAM_FAILOVER_AFTER.
	failoverAfter time.Duration
	// proxies routes every node's traffic to every other node through a
	// faultnet.Link, one per ordered pair, which the test can cut or hold.
	proxies bool
}

// testCluster is a cluster of pystream-server processes. Its methods are
// called from the test's goroutine unless they say otherwise.
type testCluster struct {
	t    testing.TB
	bin  string
	opts clusterOptions
	// ctx bounds every process; it ends at the test's cleanup.
	ctx    context.Context
	cancel context.CancelFunc
	nodes  []*clusterNode // nodes[id-1]
	// links is the proxy of each ordered pair (nil without proxies).
	links map[link]*faultnet.Link
}

// link is the direction from node from to node to.
type link struct{ from, to int }

// clusterNode is one node: its addresses, which stay the same across
// restarts, its data directory, and its current process. It is safe for
// concurrent use.
type clusterNode struct {
	id        int
	internal  string // Raft and replication, host:port
	httpAddr  string // the client API, host:port
	kafkaAddr string // the Kafka listener, host:port
	dataDir   string
	env       []string
	// client talks to the node's HTTP port, whichever process holds it.
	client *apiclient.Client

	// mu guards the fields below.
	mu   sync.Mutex
	proc *nodeProcess // nil while no process runs
	// paused is set between SIGSTOP and SIGCONT.
	paused bool
	// logs holds every line the node's processes wrote to stderr; a
	// restart adds a marker line.
	logs []string
	// changed is closed (and replaced) at every new log line and exit.
	changed chan struct{}
}

// nodeProcess is one process of a node.
type nodeProcess struct {
	cmd *exec.Cmd
	// exited is closed once stderr is read to its end and the process
	// waited for.
	exited chan struct{}
}

// The messages the harness reads from a node's JSON log.
const (
	msgListening     = "pystream-server listening"
	msgLeads         = "this node leads the metadata group: the controller starts"
	msgNoLongerLeads = "this node no longer leads the metadata group: the controller stops"
)

// startCluster builds the binary and starts a fresh cluster of three
// nodes, each on its own data directory under t.TempDir(), and waits until
// every node answers /api/ready with 200. A port taken between choosing it
// and the node's listen starts the whole cluster again on new ports.
func startCluster(t testing.TB, opts clusterOptions) *testCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of nodes and waits for elections: it runs in make test's workspace pass (with the race detector), not under -short")
	}
	bin := buildBinary(t)
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	c := &testCluster{t: t, bin: bin, opts: opts, ctx: ctx, cancel: cancel}
	t.Cleanup(c.cleanup)
	for attempt := 0; ; attempt++ {
		c.layout(filepath.Join(root, fmt.Sprintf("attempt-%d", attempt)))
		err := c.startAll()
		if err == nil {
			break
		}
		c.stopAll()
		require.Less(t, attempt, 2, "the cluster did not start: %v", err)
		t.Logf("starting the cluster again on other ports: %v", err)
	}
	waitCtx, done := context.WithTimeout(ctx, 60*time.Second)
	defer done()
	for _, n := range c.nodes {
		c.waitReady(waitCtx, n.id)
	}
	return c
}

// layout chooses the nodes' ports and data directories (and starts the
// proxies) under root.
func (c *testCluster) layout(root string) {
	t := c.t
	used := map[int]bool{}
	port := func() int {
		for {
			if p := freePort(t); !used[p] {
				used[p] = true
				return p
			}
		}
	}
	c.nodes = make([]*clusterNode, clusterSize)
	peers := make([]string, clusterSize)
	for i := range c.nodes {
		id := i + 1
		n := &clusterNode{id: id, internal: "127.0.0.1:" + strconv.Itoa(port()), httpAddr: "127.0.0.1:" + strconv.Itoa(port()),
			kafkaAddr: "127.0.0.1:" + strconv.Itoa(port()), dataDir: filepath.Join(root, fmt.Sprintf("node-%d", id)), changed: make(chan struct{})}
		n.client = apiclient.New("http://" + n.httpAddr)
		c.nodes[i] = n
		peers[i] = fmt.Sprintf("%d=%s", id, n.internal)
	}
	for _, p := range c.links {
		p.Close()
	}
	c.links = nil
	if c.opts.proxies {
		c.links = map[link]*faultnet.Link{}
		for _, from := range c.nodes {
			for _, to := range c.nodes {
				if from != to {
					l, err := faultnet.Listen(to.internal)
					require.NoError(t, err)
					c.links[link{from.id, to.id}] = l
				}
			}
		}
	}
	for _, n := range c.nodes {
		n.env = []string{
			"PYSTREAM_NODE_ID=" + strconv.Itoa(n.id),
			"PYSTREAM_CLUSTER=" + strings.Join(peers, ","),
			"PYSTREAM_PORT=" + strings.TrimPrefix(n.httpAddr, "127.0.0.1:"),
			"PYSTREAM_KAFKA_PORT=" + strings.TrimPrefix(n.kafkaAddr, "127.0.0.1:"),
			"PYSTREAM_DATA_DIR=" + n.dataDir,
			"PYSTREAM_LOG_FORMAT=json",
			"PYSTREAM_LOG_LEVEL=debug",
			"PYSTREAM_FAILOVER_AFTER=" + c.opts.failoverAfter.String(),
		}
		if c.opts.proxies {
			var routes []string
			for _, to := range c.nodes {
				if to != n {
					routes = append(routes, to.internal+"="+c.links[link{n.id, to.id}].Addr())
				}
			}
			n.env = append(n.env, "PYSTREAM_INTERNAL_ROUTES="+strings.Join(routes, ","))
		}
	}
}

// startAll starts every node's process and waits for each to listen.
func (c *testCluster) startAll() error {
	for _, n := range c.nodes {
		if err := c.spawn(n); err != nil {
			return err
		}
	}
	for _, n := range c.nodes {
		if err := c.waitListening(n); err != nil {
			return err
		}
	}
	return nil
}

// stopAll kills every running process.
func (c *testCluster) stopAll() {
	for _, n := range c.nodes {
		if n.running() {
			c.kill(n.id)
		}
	}
}

// node returns node id.
func (c *testCluster) node(id int) *clusterNode {
	c.t.Helper()
	require.True(c.t, id >= 1 && id <= len(c.nodes), "no node %d", id)
	return c.nodes[id-1]
}

// client is node id's API client.
func (c *testCluster) client(id int) *apiclient.Client { return c.node(id).client }

// ids lists every node id but the excluded ones.
func (c *testCluster) ids(exclude ...int) []int {
	var out []int
	for _, n := range c.nodes {
		if !slices.Contains(exclude, n.id) {
			out = append(out, n.id)
		}
	}
	return out
}

// spawn starts a process for n and the goroutine that reads its log.
func (c *testCluster) spawn(n *clusterNode) error {
	cmd := command(c.t, c.ctx, c.bin, n.env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	p := &nodeProcess{cmd: cmd, exited: make(chan struct{})}
	n.mu.Lock()
	n.proc, n.paused = p, false
	n.logs = append(n.logs, fmt.Sprintf("==== harness: process %d started at %s ====", cmd.Process.Pid, time.Now().UTC().Format(time.RFC3339Nano)))
	n.mu.Unlock()
	go func() {
		lines := bufio.NewScanner(stderr)
		lines.Buffer(make([]byte, 64<<10), 4<<20)
		for lines.Scan() {
			n.logLine(lines.Text())
		}
		_, _ = io.Copy(io.Discard, stderr) // a line past the buffer: drain the rest
		err := cmd.Wait()
		n.mu.Lock()
		n.logs = append(n.logs, fmt.Sprintf("==== harness: process %d ended: %v ====", cmd.Process.Pid, err))
		if n.proc == p {
			n.proc, n.paused = nil, false
		}
		n.notifyLocked()
		n.mu.Unlock()
		close(p.exited)
	}()
	return nil
}

// logLine keeps one line of the node's log.
func (n *clusterNode) logLine(line string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.logs = append(n.logs, line)
	n.notifyLocked()
}

// notifyLocked wakes whoever waits for a change. n.mu must be held.
func (n *clusterNode) notifyLocked() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// running reports whether a process of the node runs (paused or not).
func (n *clusterNode) running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil
}

// live reports whether the node runs and is not paused.
func (n *clusterNode) live() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil && !n.paused
}

// logText is every line the node's processes logged, one per line.
func (n *clusterNode) logText() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.logs, "\n")
}

// waitListening waits for the node's current process to log that it
// listens, or to exit (an error naming the end of its log).
func (c *testCluster) waitListening(n *clusterNode) error {
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	n.mu.Lock()
	seen := len(n.logs) - 1 // from the start marker of this process
	for i := len(n.logs) - 1; i >= 0; i-- {
		if strings.HasPrefix(n.logs[i], "==== harness: process") && strings.Contains(n.logs[i], "started") {
			seen = i
			break
		}
	}
	n.mu.Unlock()
	for {
		n.mu.Lock()
		for ; seen < len(n.logs); seen++ {
			if strings.Contains(n.logs[seen], `"msg":"`+msgListening+`"`) {
				n.mu.Unlock()
				return nil
			}
		}
		proc, ch := n.proc, n.changed
		n.mu.Unlock()
		if proc == nil {
			return fmt.Errorf("node %d exited before it listened: %s", n.id, tail(n.logText(), 5))
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("node %d did not listen within 60s: %s", n.id, tail(n.logText(), 5))
		}
	}
}

// kill sends SIGKILL to node id's process and waits until it is gone.
func (c *testCluster) kill(id int) {
	c.t.Helper()
	n := c.node(id)
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	require.NotNil(c.t, p, "node %d runs no process", id)
	n.mark("SIGKILL")
	require.NoError(c.t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.exited
}

// pause sends SIGSTOP to node id's process.
func (c *testCluster) pause(id int) {
	c.t.Helper()
	c.signal(id, syscall.SIGSTOP, true)
}

// resume sends SIGCONT to node id's process.
func (c *testCluster) resume(id int) {
	c.t.Helper()
	c.signal(id, syscall.SIGCONT, false)
}

func (c *testCluster) signal(id int, sig syscall.Signal, paused bool) {
	c.t.Helper()
	n := c.node(id)
	n.mu.Lock()
	defer n.mu.Unlock()
	require.NotNil(c.t, n.proc, "node %d runs no process", id)
	require.NoError(c.t, n.proc.cmd.Process.Signal(sig))
	n.paused = paused
	n.logs = append(n.logs, fmt.Sprintf("==== harness: %v at %s ====", sig, time.Now().UTC().Format(time.RFC3339Nano)))
}

// mark adds a line of the harness's own to the node's log.
func (n *clusterNode) mark(what string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.logs = append(n.logs, fmt.Sprintf("==== harness: %s at %s ====", what, time.Now().UTC().Format(time.RFC3339Nano)))
}

// restart starts node id again on its data directory and ports, after a
// kill, and waits until it answers /api/ready with 200.
func (c *testCluster) restart(ctx context.Context, id int) {
	c.t.Helper()
	n := c.node(id)
	require.False(c.t, n.running(), "node %d still runs", id)
	require.NoError(c.t, c.spawn(n))
	require.NoError(c.t, c.waitListening(n))
	c.waitReady(ctx, id)
}

// waitReady polls node id's GET /api/ready until it answers 200.
func (c *testCluster) waitReady(ctx context.Context, id int) {
	c.t.Helper()
	n := c.node(id)
	c.eventually(ctx, 30*time.Second, fmt.Sprintf("node %d answers /api/ready with 200", id), func() (bool, string) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := n.client.Ready(rctx)
		return err == nil, fmt.Sprint(err)
	})
}

// eventually polls cond every 20 ms until it holds, and fails the test
// when it still does not after timeout, with cond's last word on why.
func (c *testCluster) eventually(ctx context.Context, timeout time.Duration, what string, cond func() (ok bool, why string)) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("not within %v: %s (last: %s)", timeout, what, why)
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("%s: %v (last: %s)", what, ctx.Err(), why)
		case <-tick.C:
		}
	}
}

// cleanup kills every process and closes every proxy; after a failure it
// keeps the nodes' logs and prints their ends.
func (c *testCluster) cleanup() {
	for _, n := range c.nodes {
		n.mu.Lock()
		p := n.proc
		n.mu.Unlock()
		if p != nil {
			_ = p.cmd.Process.Signal(syscall.SIGKILL) // a paused process dies too
			<-p.exited
		}
	}
	c.cancel()
	for _, p := range c.links {
		p.Close()
	}
	if !c.t.Failed() && os.Getenv("PYSTREAM_TEST_KEEP_LOGS") == "" {
		return
	}
	dir, err := os.MkdirTemp("", "pystream-"+regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(c.t.Name(), "-")+"-")
	if err != nil {
		c.t.Logf("the nodes' logs could not be kept: %v", err)
	}
	for _, n := range c.nodes {
		text := n.logText()
		if dir != "" {
			path := filepath.Join(dir, fmt.Sprintf("node-%d.log", n.id))
			if err := os.WriteFile(path, []byte(text+"\n"), 0o644); err != nil {
				c.t.Logf("node %d's log could not be kept: %v", n.id, err)
			}
		}
		c.t.Logf("node %d: the end of its log:\n%s", n.id, tail(text, 40))
	}
	if dir != "" {
		c.t.Logf("every node's full log is in %s", dir)
	}
}

// tail is the last n lines of text.
func tail(text string, n int) string {
	lines := strings.Split(text, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// createTopic creates a topic through node via and waits until every
// running node knows it and answers /api/ready with 200 (every partition
// led, every replica open).
func (c *testCluster) createTopic(ctx context.Context, via int, name string, partitions, replicationFactor int) {
	c.t.Helper()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, created, err := c.client(via).CreateTopic(rctx, name, partitions, replicationFactor)
	require.NoError(c.t, err)
	require.True(c.t, created)
	for _, n := range c.nodes {
		if !n.live() {
			continue
		}
		c.eventually(ctx, 30*time.Second, fmt.Sprintf("node %d knows topic %q", n.id, name), func() (bool, string) {
			_, err := c.topic(ctx, n.id, name)
			return err == nil, fmt.Sprint(err)
		})
		c.waitReady(ctx, n.id)
	}
}

// topic is GET /api/topics/{name} through node via, bounded in time.
func (c *testCluster) topic(ctx context.Context, via int, name string) (*apiclient.TopicDetail, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.client(via).Topic(rctx, name)
}

// waitNewLeader waits until node via reports partition p led at an epoch
// above epoch by one of the nodes in among, and returns that leader.
func (c *testCluster) waitNewLeader(ctx context.Context, via int, name string, p int, epoch uint64, among []int, timeout time.Duration) (leader int, newEpoch uint64) {
	c.t.Helper()
	c.eventually(ctx, timeout, fmt.Sprintf("%s/%d is led by one of %v after epoch %d", name, p, among, epoch), func() (bool, string) {
		// A status names each partition's high watermark, which the node
		// asks of the leader: while the old leader hangs (paused, cut
		// off) the request may hang with it. Asked again, it reads the
		// new leadership once the node has applied it.
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		d, err := c.client(via).Topic(rctx, name)
		if err != nil {
			return false, err.Error()
		}
		ps := d.Partitions[p]
		leader, newEpoch = ps.Leader, ps.LeaderEpoch
		return ps.LeaderEpoch > epoch && slices.Contains(among, ps.Leader), fmt.Sprintf("leader %d epoch %d", ps.Leader, ps.LeaderEpoch)
	})
	return leader, newEpoch
}

// failedOverAt is when the controller committed the failover of partition
// p to newEpoch, from the journal entry it wrote (stamped with its clock,
// this machine's): how long a failover took, without the delay of the
// test's polling.
func (c *testCluster) failedOverAt(ctx context.Context, via int, name string, p int, newEpoch uint64) time.Time {
	c.t.Helper()
	var at time.Time
	c.eventually(ctx, 10*time.Second, fmt.Sprintf("the journal has the failover of %s/%d to epoch %d", name, p, newEpoch), func() (bool, string) {
		entries, err := c.journal(ctx, via)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range entries {
			if e.Event == "failover" && e.Phase == "done" && e.Topic == name && e.Partition != nil && *e.Partition == p &&
				strings.Contains(e.Summary, fmt.Sprintf("epoch %d", newEpoch)) {
				at, err = time.Parse(time.RFC3339Nano, e.Time)
				return err == nil, fmt.Sprint(err)
			}
		}
		return false, fmt.Sprintf("%d entries, none is the failover", len(entries))
	})
	return at
}

// journal reads node via's whole journal, page by page.
func (c *testCluster) journal(ctx context.Context, via int) ([]apiclient.JournalEntry, error) {
	var out []apiclient.JournalEntry
	for since := uint64(0); ; {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		j, err := c.client(via).Journal(rctx, since, 1000)
		cancel()
		if err != nil {
			return nil, err
		}
		if len(j.Entries) == 0 {
			return out, nil
		}
		out = append(out, j.Entries...)
		since = j.Next
	}
}

// waitActive waits until node via reports every partition of the topic
// with all its replicas active, and returns the topic.
func (c *testCluster) waitActive(ctx context.Context, via int, name string, timeout time.Duration) *apiclient.TopicDetail {
	c.t.Helper()
	var out *apiclient.TopicDetail
	c.eventually(ctx, timeout, fmt.Sprintf("every replica of %q is active again", name), func() (bool, string) {
		d, err := c.topic(ctx, via, name)
		if err != nil {
			return false, err.Error()
		}
		for _, ps := range d.Partitions {
			if len(ps.Active) != len(ps.Assigned) {
				return false, fmt.Sprintf("partition %d: active %v of %v", ps.Partition, ps.Active, ps.Assigned)
			}
		}
		out = d
		return true, ""
	})
	return out
}

// controllerNow names the node that leads the metadata group as the live
// nodes among see it (GET /api/cluster/nodes): every one asked must name
// the same node, one of among. 0, and why, while that is not settled.
func (c *testCluster) controllerNow(ctx context.Context, among []int) (int, string) {
	answer, asked := 0, 0
	for _, id := range among {
		if !c.node(id).live() {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		res, err := c.client(id).ClusterNodes(rctx)
		cancel()
		if err != nil {
			return 0, fmt.Sprintf("node %d: %v", id, err)
		}
		if asked > 0 && res.Controller != answer {
			return 0, fmt.Sprintf("the nodes disagree: %d and %d", answer, res.Controller)
		}
		answer, asked = res.Controller, asked+1
	}
	if !slices.Contains(among, answer) {
		return 0, fmt.Sprintf("the controller is %d, not one of %v", answer, among)
	}
	return answer, ""
}

// controller waits until the live nodes among agree on the node that
// leads the metadata group, and returns it.
func (c *testCluster) controller(ctx context.Context, among []int, timeout time.Duration) int {
	c.t.Helper()
	var id int
	c.eventually(ctx, timeout, fmt.Sprintf("one of nodes %v leads the metadata group", among), func() (bool, string) {
		var why string
		id, why = c.controllerNow(ctx, among)
		return id != 0, why
	})
	return id
}

// replicaLog reads node id's replica log of a partition from its file
// (the node must not be writing to it).
func (c *testCluster) replicaLog(id int, name string, p int) []log.Record {
	c.t.Helper()
	out, err := c.scanReplica(id, name, p)
	require.NoError(c.t, err, "node %d's replica of %s/%d", id, name, p)
	return out
}

// scanReplica is replicaLog returning its error.
func (c *testCluster) scanReplica(id int, name string, p int) ([]log.Record, error) {
	var out []log.Record
	dir := cluster.ReplicaDir(c.node(id).dataDir, id, name, p)
	err := segment.ScanDir(dir, log.Options{}, func(_ segment.SegmentInfo, _ int64, rec log.Record) error {
		out = append(out, rec)
		return nil
	})
	return out, err
}

// quarantined reads every quarantine file beside node id's replica log of
// a partition: each file's name (relative to the node's data directory)
// and records.
func (c *testCluster) quarantined(id int, name string, p int) map[string][]log.Record {
	c.t.Helper()
	n := c.node(id)
	dir := cluster.ReplicaDir(n.dataDir, id, name, p)
	files, err := filepath.Glob(filepath.Join(dir, "quarantine-*.bin"))
	require.NoError(c.t, err)
	out := map[string][]log.Record{}
	for _, f := range files {
		from, _, _, ok := cluster.ParseQuarantineName(filepath.Base(f))
		require.True(c.t, ok, "quarantine file name %s", f)
		var recs []log.Record
		require.NoError(c.t, log.ScanFileFrom(f, from, log.Options{}, func(_ int64, rec log.Record) error {
			recs = append(recs, rec)
			return nil
		}))
		rel, err := filepath.Rel(n.dataDir, f)
		require.NoError(c.t, err)
		out[rel] = recs
	}
	return out
}

// cut cuts the link from one node to another: existing connections are
// closed and new ones refused until heal.
func (c *testCluster) cut(from, to int) { c.proxy(from, to).Set(faultnet.Cut) }

// hold holds the link from one node to another: nothing is closed and
// nothing gets through until heal.
//
//lint:ignore U1000 the held-link tests of the fault paths use it
func (c *testCluster) hold(from, to int) { c.proxy(from, to).Set(faultnet.Held) }

// heal lets the link from one node to another carry connections again.
func (c *testCluster) heal(from, to int) { c.proxy(from, to).Set(faultnet.Open) }

// isolate cuts every link to and from node id.
func (c *testCluster) isolate(id int) {
	c.node(id).mark("isolated")
	for _, other := range c.ids(id) {
		c.cut(id, other)
		c.cut(other, id)
	}
}

// rejoin heals every link to and from node id.
func (c *testCluster) rejoin(id int) {
	c.node(id).mark("links healed")
	for _, other := range c.ids(id) {
		c.heal(id, other)
		c.heal(other, id)
	}
}

func (c *testCluster) proxy(from, to int) *faultnet.Link {
	c.t.Helper()
	p, ok := c.links[link{from, to}]
	require.True(c.t, ok, "no proxy from node %d to node %d (clusterOptions.proxies)", from, to)
	return p
}
