package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/faultnet"
)

// Node is one pystream-server process slot: its addresses and data
// directory, which stay the same across restarts, and its current
// process. It is safe for concurrent use.
type Node struct {
	ID        int
	Internal  string // Raft and replication, host:port (cluster mode)
	HTTP      string // the client API, host:port
	Kafka     string // the first Kafka listener, host:port
	DataDir   string
	LogPath   string
	Client    *apiclient.Client
	env       []string
	bin       string
	kafkaPort int

	// mu guards the fields below.
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	paused bool
}

// Nodes is the processes of a run and the proxies between them.
type Nodes struct {
	Mode  string
	Nodes []*Node
	// links is the proxy of each ordered pair of nodes: links[[2]int{a, b}]
	// carries a's connections to b.
	links map[[2]int]*faultnet.Link
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("chaos: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// freePorts is n consecutive free loopback ports (the embedded server's
// brokers listen on the Kafka port and the ones after it).
func freePorts(n int) (int, error) {
	for range 50 {
		base, err := freePort()
		if err != nil {
			return 0, err
		}
		ok := true
		for i := 1; i < n && ok; i++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+i))
			if err != nil {
				ok = false
				continue
			}
			ln.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("chaos: no run of free ports")
}

// NewNodes lays out the nodes of a run under root (data directories) and
// logDir (their logs): three nodes whose internal routes all go through
// proxies in cluster mode, one embedded server of three brokers
// otherwise. Nothing starts yet.
func NewNodes(mode, bin, root, logDir string, failoverAfter time.Duration) (*Nodes, error) {
	ns := &Nodes{Mode: mode, links: map[[2]int]*faultnet.Link{}}
	count := 3
	if mode == ModeEmbedded {
		count = 1
	}
	for id := 1; id <= count; id++ {
		n := &Node{ID: id, bin: bin, DataDir: fmt.Sprintf("%s/node-%d", root, id), LogPath: fmt.Sprintf("%s/node-%d.log", logDir, id)}
		ports := make([]int, 2)
		for i := range ports {
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			ports[i] = p
		}
		kafka, err := freePorts(3)
		if err != nil {
			return nil, err
		}
		n.Internal = "127.0.0.1:" + strconv.Itoa(ports[0])
		n.HTTP = "127.0.0.1:" + strconv.Itoa(ports[1])
		n.kafkaPort = kafka
		n.Kafka = "127.0.0.1:" + strconv.Itoa(kafka)
		n.Client = apiclient.New("http://" + n.HTTP)
		if err := os.MkdirAll(n.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("chaos: %w", err)
		}
		ns.Nodes = append(ns.Nodes, n)
	}
	var peers []string
	for _, n := range ns.Nodes {
		peers = append(peers, fmt.Sprintf("%d=%s", n.ID, n.Internal))
	}
	for _, n := range ns.Nodes {
		n.env = []string{
			"PYSTREAM_HOST=127.0.0.1",
			"PYSTREAM_PORT=" + strings.TrimPrefix(n.HTTP, "127.0.0.1:"),
			"PYSTREAM_KAFKA_PORT=" + strconv.Itoa(n.kafkaPort),
			"PYSTREAM_DATA_DIR=" + n.DataDir,
			"PYSTREAM_LOG_FORMAT=json",
			"PYSTREAM_FAILOVER_AFTER=" + failoverAfter.String(),
			// The group member heartbeats often; a short session lets a
			// rebalance after a fault finish within the run.
			"PYSTREAM_GROUP_SESSION_TIMEOUT=10s",
			"PYSTREAM_GROUP_HEARTBEAT_INTERVAL=1s",
		}
		if mode == ModeEmbedded {
			n.env = append(n.env, "PYSTREAM_BROKERS=3")
			continue
		}
		n.env = append(n.env, "PYSTREAM_NODE_ID="+strconv.Itoa(n.ID), "PYSTREAM_CLUSTER="+strings.Join(peers, ","))
		var routes []string
		for _, to := range ns.Nodes {
			if to == n {
				continue
			}
			l, err := faultnet.Listen(to.Internal)
			if err != nil {
				ns.Close()
				return nil, err
			}
			ns.links[[2]int{n.ID, to.ID}] = l
			routes = append(routes, to.Internal+"="+l.Addr())
		}
		n.env = append(n.env, "PYSTREAM_INTERNAL_ROUTES="+strings.Join(routes, ","))
	}
	return ns, nil
}

// Node is node id.
func (ns *Nodes) Node(id int) *Node { return ns.Nodes[id-1] }

// IDs lists every node id.
func (ns *Nodes) IDs() []int {
	out := make([]int, len(ns.Nodes))
	for i, n := range ns.Nodes {
		out[i] = n.ID
	}
	return out
}

// Start starts the node's process, its stderr appended to its log file.
func (n *Node) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return fmt.Errorf("chaos: node %d already runs", n.ID)
	}
	f, err := os.OpenFile(n.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("chaos: node %d log: %w", n.ID, err)
	}
	fmt.Fprintf(f, "==== chaos: node %d starts at %s ====\n", n.ID, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(n.bin)
	cmd.Env = append(os.Environ(), n.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("chaos: start node %d: %w", n.ID, err)
	}
	exited := make(chan struct{})
	n.cmd, n.exited, n.paused = cmd, exited, false
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(f, "==== chaos: node %d process %d ended at %s: %v ====\n", n.ID, cmd.Process.Pid, time.Now().UTC().Format(time.RFC3339Nano), err)
		f.Close()
		n.mu.Lock()
		if n.cmd == cmd {
			n.cmd, n.paused = nil, false
		}
		n.mu.Unlock()
		close(exited)
	}()
	return nil
}

// Mark writes a line of the suite's own into the node's log.
func (n *Node) Mark(what string) {
	f, err := os.OpenFile(n.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "==== chaos: %s at %s ====\n", what, time.Now().UTC().Format(time.RFC3339Nano))
}

// Running reports whether a process of the node runs (paused or not).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil
}

// Live reports whether the node runs and is not paused.
func (n *Node) Live() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil && !n.paused
}

// signal sends sig to the node's process.
func (n *Node) signal(sig syscall.Signal) (chan struct{}, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return nil, fmt.Errorf("chaos: node %d runs no process", n.ID)
	}
	if err := n.cmd.Process.Signal(sig); err != nil {
		return nil, fmt.Errorf("chaos: node %d: %v: %w", n.ID, sig, err)
	}
	switch sig {
	case syscall.SIGSTOP:
		n.paused = true
	case syscall.SIGCONT:
		n.paused = false
	}
	return n.exited, nil
}

// Kill sends SIGKILL and waits until the process is gone.
func (n *Node) Kill() error {
	n.Mark("SIGKILL")
	exited, err := n.signal(syscall.SIGKILL)
	if err != nil {
		return err
	}
	<-exited
	return nil
}

// Stop sends SIGTERM and waits up to timeout for the process to end.
// A process still there then is sent SIGQUIT, so that the Go runtime
// writes every goroutine's stack into the node's log (the evidence of
// where the stop hung), and killed a few seconds later: an error, since a
// clean stop should need neither.
func (n *Node) Stop(timeout time.Duration) error {
	n.Mark("SIGTERM")
	exited, err := n.signal(syscall.SIGTERM)
	if err != nil {
		return err
	}
	select {
	case <-exited:
		return nil
	case <-time.After(timeout):
	}
	n.Mark("SIGQUIT (the stop hangs: every goroutine's stack follows)")
	if _, err := n.signal(syscall.SIGQUIT); err == nil {
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
	}
	if n.Running() {
		_ = n.Kill()
	}
	return fmt.Errorf("chaos: node %d did not stop within %v of SIGTERM; its goroutines are in %s", n.ID, timeout, n.LogPath)
}

// Pause sends SIGSTOP.
func (n *Node) Pause() error {
	n.Mark("SIGSTOP")
	_, err := n.signal(syscall.SIGSTOP)
	return err
}

// Resume sends SIGCONT.
func (n *Node) Resume() error {
	n.Mark("SIGCONT")
	_, err := n.signal(syscall.SIGCONT)
	return err
}

// WaitReady polls GET /api/ready until it answers 200, up to timeout.
func (n *Node) WaitReady(ctx context.Context, timeout time.Duration) error {
	return poll(ctx, timeout, 50*time.Millisecond, func() (bool, string) {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := n.Client.Ready(rctx)
		return err == nil, fmt.Sprintf("node %d: %v", n.ID, err)
	})
}

// SetLinks sets every link to and from node id to state.
func (ns *Nodes) SetLinks(id int, state faultnet.State) {
	ns.Node(id).Mark("links " + state.String())
	for k, l := range ns.links {
		if k[0] == id || k[1] == id {
			l.Set(state)
		}
	}
}

// Close kills every process and closes every proxy.
func (ns *Nodes) Close() {
	for _, n := range ns.Nodes {
		n.mu.Lock()
		cmd, exited := n.cmd, n.exited
		n.mu.Unlock()
		if cmd != nil {
			_ = cmd.Process.Signal(syscall.SIGKILL) // a paused process dies too
			<-exited
		}
	}
	for _, l := range ns.links {
		l.Close()
	}
}

// errTimeout is poll's error when its condition did not hold in time.
var errTimeout = errors.New("chaos: timed out")

// poll calls cond every interval until it holds, timeout passes (an error
// wrapping errTimeout with cond's last word) or ctx ends.
func poll(ctx context.Context, timeout, interval time.Duration, cond func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %v: %s", errTimeout, timeout, why)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: %w: %s", ctx.Err(), why)
		case <-time.After(interval):
		}
	}
}
