package clusternode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/controller"
	"github.com/pystream/pystream/server/netmux"
	"github.com/pystream/pystream/server/raftmeta"
	"github.com/pystream/pystream/server/replication"
	"github.com/pystream/pystream/topic"
)

// Node is one broker process of a cluster-mode cluster: a broker holding
// its replicas, a voter of the metadata group, and — while it leads that
// group — the controller. It is safe for concurrent use.
type Node struct {
	cfg    Config
	log    *slog.Logger
	broker *cluster.Broker
	mux    *netmux.Mux
	raft   *raftmeta.Node
	fsm    *fsm
	rpc    *replication.Client
	inner  *http.Server
	ctrl   *controller.Controller
	hbs    *heartbeats
	// now is the clock (tests may replace it before Open returns).
	now func() time.Time

	// mu guards replicas and routers.
	mu       sync.Mutex
	replicas map[partKey]*replica
	routers  map[string]*topic.Router

	// healMu serialises followHealing: a call reads the switch and sets
	// the controller under it, so an older reading never lands last.
	healMu sync.Mutex

	// registered is set once this process's registration has been
	// committed and applied here: from then on its metadata is at least
	// as recent as the moment the process started.
	registered atomic.Bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

type partKey struct {
	topic     string
	partition int
}

// RaftDir is where a node keeps Raft's log, stable store and snapshots.
func RaftDir(dataDir string) string { return filepath.Join(dataDir, "raft") }

// Open starts the node: it opens its broker directory, listens on its
// internal address (or cfg.Listener), starts or recovers its Raft voter,
// serves the internal API, registers itself through Raft once a leader is
// known, and from then on heartbeats, keeps its replicas in step, and runs
// the controller whenever it leads the metadata group.
func Open(cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TopicDefaults == nil {
		d := topic.DefaultConfig()
		cfg.TopicDefaults = &d
	}
	var n *Node
	// Whoever opens a replica log asks the broker for its topic's
	// configuration (cluster.Broker.TopicConfig); the node answers.
	b, err := cluster.OpenBrokerWithOptions(cfg.ID, cfg.DataDir, cluster.BrokerOptions{
		TopicConfig: func(name string) (topic.Config, error) { return n.TopicConfig(name) },
		Logf:        func(format string, args ...any) { logger.Warn(fmt.Sprintf(format, args...)) }})
	if err != nil {
		return nil, fmt.Errorf("clusternode: %w", err)
	}
	ln := cfg.Listener
	if ln == nil {
		var lc net.ListenConfig
		if ln, err = lc.Listen(context.Background(), "tcp", cfg.Peers[cfg.ID]); err != nil {
			return nil, errors.Join(fmt.Errorf("clusternode: listen on %s: %w", cfg.Peers[cfg.ID], err), b.Close())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = &Node{cfg: cfg, log: logger.With("node", cfg.ID), broker: b, fsm: newFSM(), now: time.Now,
		replicas: map[partKey]*replica{}, ctx: ctx, cancel: cancel}
	n.mux = netmux.New(ln)
	n.rpc = replication.NewClient(func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer // HTTP/2 is what netmux's Default gets
		return d.DialContext(ctx, network, n.route(addr))
	})
	n.hbs = newHeartbeats(n)
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	n.inner = &http.Server{Handler: replication.NewHandler(n, n.log), Protocols: &protocols, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = n.inner.Serve(n.mux.Default()) }() // ends at Shutdown
	advertise := cfg.Peers[cfg.ID]
	if advertise == "" {
		advertise = ln.Addr().String()
	}
	n.raft, err = raftmeta.Open(raftmeta.Config{
		ID: cfg.ID, Dir: RaftDir(cfg.DataDir), Peers: cfg.Peers, Join: cfg.Join,
		Listener: n.mux.Listener(netmux.KindRaft), Advertise: advertise,
		Dial: func(ctx context.Context, addr string) (net.Conn, error) {
			return netmux.Dial(ctx, n.route(addr), netmux.KindRaft)
		},
		FSM: n.fsm, Logger: n.log,
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("clusternode: %w", err), n.shutdownTransport(), b.Close())
	}
	// Every listener is registered: connections may be routed now.
	go func() { _ = n.mux.Serve() }() // ends when the listener closes
	n.ctrl, err = controller.New(&controlView{n: n}, controller.Config{
		FailoverAfter: cfg.FailoverAfter, Logger: n.log, Registerer: cfg.Registerer})
	if err != nil {
		return nil, errors.Join(err, n.Close())
	}
	// From here on the controller follows the replicated switch of
	// automatic healing (healing.go), as recovered and as it changes.
	n.fsm.setNotify(n.followHealing)
	n.followHealing()
	n.start(advertise)
	return n, nil
}

func (n *Node) start(advertise string) {
	n.wg.Add(4)
	go func() { defer n.wg.Done(); n.register(advertise) }()
	go func() { defer n.wg.Done(); n.heartbeatLoop() }()
	go func() { defer n.wg.Done(); n.replicaLoop() }()
	go func() { defer n.wg.Done(); n.leadershipLoop() }()
}

// route is the address to dial to reach a node's internal address.
func (n *Node) route(addr string) string {
	if via, ok := n.cfg.Routes[addr]; ok {
		return via
	}
	return addr
}

// ID is the node's broker id.
func (n *Node) ID() int { return n.cfg.ID }

// Close stops the node's loops, its Raft voter, its internal API and its
// broker. Closing twice is harmless.
func (n *Node) Close() error {
	var errs []error
	n.closed.Do(func() {
		n.cancel()
		n.wg.Wait()
		if n.raft != nil {
			errs = append(errs, n.raft.Close())
		}
		errs = append(errs, n.shutdownTransport(), n.broker.Close())
		n.rpc.Close()
	})
	return errors.Join(errs...)
}

func (n *Node) shutdownTransport() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := n.inner.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = n.inner.Close()
	}
	return errors.Join(err, n.mux.Close())
}

// register adds this node's addresses to the metadata until it succeeds
// or the node closes. It proposes at every start, even when the metadata
// this node recovered names it already (the command then changes
// nothing): the proposal's answer is waited for here, so that a node
// restarted on its data directory is not ready while it still replays an
// older leadership from its Raft log.
func (n *Node) register(advertise string) {
	info := &cluster.NodeInfo{ID: n.cfg.ID, Addr: advertise, HTTPAddr: n.cfg.HTTPAddr, KafkaAddr: n.cfg.KafkaAddr}
	for {
		ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
		_, err := n.propose(ctx, cluster.MetaCommand{Op: cluster.OpRegisterNode, Node: info})
		cancel()
		if err == nil {
			n.registered.Store(true)
			n.log.Info("broker registered", "addr", advertise, "http", n.cfg.HTTPAddr, "kafka", n.cfg.KafkaAddr)
			return
		}
		if n.ctx.Err() != nil {
			return
		}
		n.log.Debug("registration not yet accepted", "err", err)
		if !n.sleep(200 * time.Millisecond) {
			return
		}
	}
}

// sleep waits d or until the node closes; false means it closed.
func (n *Node) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-n.ctx.Done():
		return false
	}
}

// propose applies c through Raft — on this node when it leads, else on
// the leader over the internal API — and waits until this node's own copy
// of the metadata has applied it, so that what a caller does next sees it.
// It retries while there is no leader, until ctx ends.
func (n *Node) propose(ctx context.Context, c cluster.MetaCommand) (cluster.MetaResult, error) {
	if c.Time.IsZero() {
		c.Time = n.now().UTC()
	}
	cmd, err := cluster.EncodeMetaCommand(c)
	if err != nil {
		return cluster.MetaResult{}, fmt.Errorf("clusternode: %w", err)
	}
	for {
		out, err := n.proposeOnce(ctx, cmd)
		if err == nil {
			var ar appliedResult
			if err := json.Unmarshal(out, &ar); err != nil {
				return cluster.MetaResult{}, fmt.Errorf("clusternode: proposal answer: %w", err)
			}
			if err := n.fsm.waitApplied(ctx, ar.Index, n.raft.AppliedIndex); err != nil {
				return ar.Result, err
			}
			return ar.Result, nil
		}
		if !retryProposal(err) {
			return cluster.MetaResult{}, err
		}
		select {
		case <-ctx.Done():
			return cluster.MetaResult{}, fmt.Errorf("%w: %w", ErrNoLeader, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// proposeOnce makes one attempt. A refusal by the state machine comes back
// wrapping its sentinel wherever it was applied.
func (n *Node) proposeOnce(ctx context.Context, cmd []byte) ([]byte, error) {
	if n.raft.IsLeader() {
		out, err := n.raft.Apply(ctx, cmd)
		var refused *raftmeta.RefusedError
		if errors.As(err, &refused) {
			return nil, refused.Err
		}
		return out, err
	}
	id, addr := n.raft.Leader()
	if id == 0 {
		return nil, ErrNoLeader
	}
	out, err := n.rpc.Propose(ctx, addr, cmd)
	var re *replication.Error
	if errors.As(err, &re) && re.Code == replication.CodeRefused {
		return nil, &remoteRefusal{msg: re.Message, sentinel: refusals[re.Reason]}
	}
	return out, err
}

// retryProposal reports whether a failed proposal may succeed elsewhere or
// later: no leader, a leader that lost its place, an unreachable one.
func retryProposal(err error) bool {
	var rr *remoteRefusal
	if errors.As(err, &rr) {
		return false
	}
	if errors.Is(err, ErrNoLeader) || errors.Is(err, raftmeta.ErrNotLeader) {
		return true
	}
	var re *replication.Error
	if errors.As(err, &re) {
		return re.Code == replication.CodeNotLeader || re.Code == replication.CodeUnavailable
	}
	// Neither a refusal of the state machine nor one of the peer: the
	// leader could not be reached, or lost its place meanwhile.
	return !isRefusal(err)
}

// isRefusal reports whether err is the state machine's refusal.
func isRefusal(err error) bool {
	return refusalName(err) != "" || errors.As(err, new(*cluster.TopicExistsError)) || errors.As(err, new(*cluster.MetadataError))
}

// Propose is the internal API's proposal (replication.Peer): only the Raft
// leader applies; the others answer CodeNotLeader with where it is.
func (n *Node) Propose(ctx context.Context, cmd []byte) ([]byte, error) {
	if !n.raft.IsLeader() {
		id, _ := n.raft.Leader()
		return nil, &replication.Error{Code: replication.CodeNotLeader, Message: "this node does not lead the metadata group", Leader: id}
	}
	out, err := n.raft.Apply(ctx, cmd)
	var refused *raftmeta.RefusedError
	if errors.As(err, &refused) {
		return nil, &replication.Error{Code: replication.CodeRefused, Message: refused.Err.Error(), Reason: refusalName(refused.Err)}
	}
	if errors.Is(err, raftmeta.ErrNotLeader) {
		return nil, &replication.Error{Code: replication.CodeNotLeader, Message: err.Error()}
	}
	return out, err
}

// leadershipLoop runs the controller while this node leads the metadata
// group, and stops it when it no longer does; it tells Config.LeaderChanged
// of every change of leader it sees.
func (n *Node) leadershipLoop() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var run *controllerRun
	defer func() { run.stop() }()
	told := 0
	for {
		leading := n.raft.IsLeader()
		switch {
		case leading && run == nil:
			// The controller starts from every command committed before
			// this term, applied: an automatic healing switched off in
			// the log it has yet to apply, a failover already decided.
			// Not there yet, it tries again at the next tick.
			if err := n.barrier(); err != nil {
				n.log.Warn("this node leads the metadata group, but its copy is not caught up yet: the controller waits", "err", err)
				break
			}
			n.log.Info("this node leads the metadata group: the controller starts")
			n.hbs.reset(n.now())
			run = startController(n.ctx, n.ctrl)
		case !leading && run != nil:
			n.log.Info("this node no longer leads the metadata group: the controller stops")
			run.stop()
			run = nil
		}
		if leader := n.leaderSeen(leading); leader != told && n.cfg.LeaderChanged != nil {
			told = leader
			n.cfg.LeaderChanged(leader)
		}
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// barrier waits, for at most a few seconds, until this node's copy of
// the metadata has applied every command committed before it.
func (n *Node) barrier() error {
	ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
	defer cancel()
	return n.raft.Barrier(ctx)
}

// leaderSeen is the leader as the loop reports it: this node while it
// leads, else the leader Raft knows of, never this node (it has just
// stepped down), 0 when none is known.
func (n *Node) leaderSeen(leading bool) int {
	if leading {
		return n.cfg.ID
	}
	if id, _ := n.raft.Leader(); id != n.cfg.ID {
		return id
	}
	return 0
}

// controllerRun is one term of the controller's loop.
type controllerRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startController(parent context.Context, k *controller.Controller) *controllerRun {
	ctx, cancel := context.WithCancel(parent)
	r := &controllerRun{cancel: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); k.Run(ctx) }()
	return r
}

// stop ends the term and waits for it; a nil run is stopped already.
func (r *controllerRun) stop() {
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
}

// Wake asks the controller for a pass now, when this node runs it.
func (n *Node) Wake() { n.ctrl.Wake() }

// ForgetTopic drops what the controller remembers of a deleted topic.
func (n *Node) ForgetTopic(name string) { n.ctrl.ForgetTopic(name) }

// Ready reports whether the node can serve: the metadata group has a
// leader, this node is registered, and — on the leader — the controller
// finds every partition led and every replica open.
func (n *Node) Ready() (bool, []string) {
	if id, _ := n.raft.Leader(); id == 0 {
		return false, []string{"the metadata group has no leader: an election is under way, or a majority of the nodes cannot be reached"}
	}
	if !n.registered.Load() {
		return false, []string{fmt.Sprintf("broker %d is not yet registered in the cluster's metadata, or has not yet applied it up to its registration", n.cfg.ID)}
	}
	if n.raft.IsLeader() {
		return n.ctrl.Ready()
	}
	return true, nil
}
