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
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/controller"
	"github.com/pystream/pystream/server/netmux"
	"github.com/pystream/pystream/server/raftmeta"
	"github.com/pystream/pystream/server/replication"
	"github.com/pystream/pystream/topic"
)

// requestTimeout bounds a client request's work on the nodes it reaches:
// well inside the HTTP server's write timeout, so that a request that
// cannot finish (no leader) is answered with why, not cut off.
const requestTimeout = 15 * time.Second

// Node is one broker process of a cluster-mode cluster: the wiring of a
// cluster.Cluster (NewMember) to Raft as its metadata store, to the
// network as its replica transport and to the brokers' heartbeats as what
// it knows of the others; and, while it leads the metadata group, the
// controller. It is safe for concurrent use.
type Node struct {
	cfg  Config
	log  *slog.Logger
	core *cluster.Cluster
	mux  *netmux.Mux
	raft *raftmeta.Node
	// raftp is raft for the handshakes of the internal port, which may
	// run before Open has set raft.
	raftp atomic.Pointer[raftmeta.Node]
	fsm   *fsm
	// refusals logs the handshakes the internal port refuses.
	refusals *bounds.Refusals
	rpc      *replication.Client
	// inner serves the internal API.
	inner *http.Server
	ctrl  *controller.Controller
	hbs   *heartbeats
	// now is the clock.
	now func() time.Time
	// callDeadline bounds every request to another process this node
	// waits on (CallDeadline of its failover delay).
	callDeadline time.Duration

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

// RaftDir is where a node keeps Raft's log, stable store and snapshots.
func RaftDir(dataDir string) string { return filepath.Join(dataDir, "raft") }

// Open starts the node: it opens its broker (through cluster.NewMember),
// listens on its internal address (or cfg.Listener), starts or recovers
// its Raft voter, serves the internal API, registers itself through Raft
// once a leader is known, and from then on heartbeats and runs the
// controller whenever it leads the metadata group.
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
	n := &Node{cfg: cfg, log: logger.With("node", cfg.ID), fsm: newFSM(), now: time.Now, callDeadline: CallDeadline(cfg.FailoverAfter)}
	if cfg.Broker.Now != nil {
		n.now = cfg.Broker.Now
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.hbs = newHeartbeats(n)
	bopts := cfg.Broker
	if bopts.Logf == nil {
		bopts.Logf = func(format string, args ...any) { n.log.Warn(fmt.Sprintf(format, args...)) }
	}
	core, err := cluster.NewMember(cluster.MemberConfig{ID: cfg.ID, Root: cfg.DataDir, Store: raftStore{n}, Transport: netTransport{n},
		Observer: n.hbs, StatusWait: HeartbeatWindow(cfg.FailoverAfter), Options: cluster.Options{Broker: bopts, TopicDefaults: cfg.TopicDefaults, Advanced: cfg.Advanced}})
	if err != nil {
		return nil, fmt.Errorf("clusternode: %w", err)
	}
	n.core = core
	ln := cfg.Listener
	if ln == nil {
		var lc net.ListenConfig
		if ln, err = lc.Listen(context.Background(), "tcp", cfg.Peers[cfg.ID]); err != nil {
			return nil, errors.Join(fmt.Errorf("clusternode: listen on %s: %w", cfg.Peers[cfg.ID], err), core.Close())
		}
	}
	acceptErrors, err := bounds.AcceptErrors(cfg.Registerer, "internal")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("clusternode: %w", err), ln.Close(), core.Close())
	}
	if n.refusals, err = bounds.NewRefusals(cfg.Registerer, "internal"); err != nil {
		return nil, errors.Join(fmt.Errorf("clusternode: %w", err), ln.Close(), core.Close())
	}
	mc := netmux.Config{Logger: n.log, AcceptErrors: acceptErrors, Refused: n.refusedPeer}
	if cfg.TLS != nil {
		mc.TLS = cfg.TLS.Config(n.acceptPeer)
	}
	n.mux = netmux.NewWithConfig(ln, mc)
	// An internal connection silent for half a call deadline is pinged,
	// and closed when the ping goes unanswered for a call deadline: one
	// whose bytes are held is dropped for a fresh one, never before the
	// calls on it have failed by their own deadlines.
	n.rpc = replication.NewClientWithConfig(replication.ClientConfig{
		Dial: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return n.dialInternal(ctx, addr, 0, 0) // HTTP/2 is what netmux's Default gets
		},
		MaxPayload: core.MaxPayloadSize(), PingTimeout: n.callDeadline})
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	// The server pings a silent client too, so that a connection whose
	// peer stopped (paused, held) does not keep its streams forever.
	n.inner = &http.Server{Handler: replication.NewHandler(peer{n}, n.log), Protocols: &protocols, ReadHeaderTimeout: 10 * time.Second,
		ConnContext: n.connContext, HTTP2: &http.HTTP2Config{SendPingTimeout: n.callDeadline / 2, PingTimeout: n.callDeadline}}
	go func() { _ = n.inner.Serve(n.mux.Default()) }() // ends at Shutdown
	advertise := cfg.Peers[cfg.ID]
	if advertise == "" {
		advertise = ln.Addr().String()
	}
	raftTimeout := RaftHeartbeatTimeout(cfg.FailoverAfter)
	rc := raftmeta.Config{ID: cfg.ID, Dir: RaftDir(cfg.DataDir), Peers: cfg.Peers, Join: cfg.Join, FSM: n.fsm, Logger: n.log,
		HeartbeatTimeout: raftTimeout, ElectionTimeout: raftTimeout, LeaderLeaseTimeout: min(raftTimeout, raftmeta.DefaultLeaderLeaseTimeout),
		TransportTimeout: n.callDeadline}
	if cfg.RaftTransport != nil {
		rc.Transport = cfg.RaftTransport
	} else {
		rc.Listener, rc.Advertise = n.mux.Listener(netmux.KindRaft), advertise
		rc.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			return n.dialInternal(ctx, addr, 0, netmux.KindRaft)
		}
	}
	n.raft, err = raftmeta.Open(rc)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("clusternode: %w", err), n.shutdownTransport(), core.Close())
	}
	n.raftp.Store(n.raft)
	// Every listener is registered: connections may be routed now.
	go func() { _ = n.mux.Serve() }() // ends when the listener closes
	n.ctrl, err = controller.New(core, controller.Config{FailoverAfter: cfg.FailoverAfter, Logger: n.log, Registerer: cfg.Registerer})
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
	n.wg.Add(3)
	go func() { defer n.wg.Done(); n.register(advertise) }()
	go func() { defer n.wg.Done(); n.heartbeatLoop() }()
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

// Cluster is the node's cluster.Cluster: what the HTTP API and the Kafka
// listener serve, as they serve one process's.
func (n *Node) Cluster() *cluster.Cluster { return n.core }

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
		errs = append(errs, n.shutdownTransport(), n.core.Close())
		n.rpc.Close()
	})
	return errors.Join(errs...)
}

// shutdownTransport closes the internal API: the requests in flight
// are cut, as a stopped process cuts them, rather than waited for (an
// HTTP/2 connection's graceful close takes a second of its own), so that
// the other nodes see this one gone at once.
func (n *Node) shutdownTransport() error {
	return errors.Join(n.inner.Close(), n.mux.Close())
}

// register adds this node's addresses to the metadata until it succeeds
// or the node closes. It proposes at every start, even when the metadata
// this node recovered names it already (the command then changes
// nothing): the proposal's answer is waited for here, so that a node
// restarted on its data directory is not ready while it still replays an
// older leadership from its Raft log.
func (n *Node) register(advertise string) {
	info := &cluster.NodeInfo{ID: n.cfg.ID, Addr: advertise, HTTPAddr: n.cfg.HTTPAddr, KafkaAddr: n.cfg.KafkaAddr}
	var refusedOnce bool
	for {
		ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
		_, err := n.propose(ctx, cluster.MetaCommand{Op: cluster.OpRegisterNode, Node: info})
		cancel()
		if err == nil {
			n.registered.Store(true)
			n.fsm.poke()
			n.log.Info("broker registered", "addr", advertise, "http", n.cfg.HTTPAddr, "kafka", n.cfg.KafkaAddr)
			return
		}
		if n.ctx.Err() != nil {
			return
		}
		var taken *cluster.AddrTakenError
		switch {
		case errors.As(err, &taken) && !refusedOnce:
			// Not a moment's wait: the operator must move one of the two
			// nodes. Said once; the node keeps asking, in case the other
			// node moves.
			refusedOnce = true
			n.log.Error("registration refused: another node holds this internal address; give this node its own PYSTREAM_CLUSTER address",
				"addr", advertise, "holder", taken.Holder, "err", err)
		default:
			n.log.Debug("registration not yet accepted", "err", err)
		}
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
// It retries while there is no leader, until ctx ends (ErrNoLeader) or
// the node closes (ErrClosed). A refusal of the
// state machine comes back as the error it is, wherever it was applied.
func (n *Node) propose(ctx context.Context, c cluster.MetaCommand) (cluster.MetaResult, error) {
	if c.Time.IsZero() {
		c.Time = n.now().UTC()
	}
	cmd, err := cluster.EncodeMetaCommand(c)
	if err != nil {
		return cluster.MetaResult{}, fmt.Errorf("clusternode: %w", err)
	}
	for {
		if n.ctx.Err() != nil {
			return cluster.MetaResult{}, ErrClosed
		}
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
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return cluster.MetaResult{}, fmt.Errorf("%w: %w", ErrNoLeader, err)
		case <-n.ctx.Done():
			t.Stop()
			return cluster.MetaResult{}, ErrClosed
		case <-t.C:
		}
	}
}

// proposeOnce makes one attempt.
func (n *Node) proposeOnce(ctx context.Context, cmd []byte) ([]byte, error) {
	if n.raft.IsLeader() {
		out, err := n.raft.Apply(ctx, cmd)
		var refused *raftmeta.RefusedError
		if errors.As(err, &refused) {
			return nil, refused.Err
		}
		return out, err
	}
	id, _ := n.raft.Leader()
	if id == 0 {
		return nil, ErrNoLeader
	}
	addr, err := n.addrOf(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoLeader, err)
	}
	// A leader that stopped answering fails the attempt within the call
	// deadline, unavailable; the next attempt asks whoever leads then.
	ctx, cancel := context.WithTimeout(ctx, n.callDeadline)
	defer cancel()
	return n.rpc.Propose(ctx, addr, cmd)
}

// retryProposal reports whether a failed proposal may succeed elsewhere or
// later: no leader, a leader that lost its place, an unreachable one. A
// refusal of the state machine is final.
func retryProposal(err error) bool {
	switch {
	case errors.Is(err, ErrNoLeader), errors.Is(err, raftmeta.ErrNotLeader), errors.Is(err, raftmeta.ErrLeadershipLost):
		return true
	case replication.CodeOf(err) == replication.CodeNotLeader:
		return true
	case replication.CodeOf(err) != "":
		return false // the peer refused it
	}
	// Neither a refusal nor an answer: the leader could not be reached.
	return errors.Is(err, cluster.ErrBrokerUnavailable)
}

// addrOf is a broker's internal address, from the metadata.
func (n *Node) addrOf(id int) (string, error) {
	info, ok := n.fsm.node(id)
	if !ok {
		return "", fmt.Errorf("clusternode: broker %d has no registered address: %w", id, cluster.ErrBrokerUnavailable)
	}
	return info.Addr, nil
}

// Nodes lists the registered brokers' addresses, by id.
func (n *Node) Nodes() []cluster.NodeInfo {
	var out []cluster.NodeInfo
	n.fsm.read(func(s *cluster.MetaState) {
		for _, id := range s.Meta.Brokers {
			if info, ok := s.Nodes[id]; ok {
				out = append(out, info)
			}
		}
	})
	return out
}

// Ready reports whether the node can serve: the metadata group has a
// leader, this node is registered (its metadata replayed at least up to
// its own start), and — on the leader — the controller finds every
// partition led and every replica open; elsewhere, the controller has
// answered one of this node's heartbeats.
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
	if !n.hbs.known() {
		return false, []string{fmt.Sprintf("broker %d has not yet heard from the controller what it knows of the brokers: its first heartbeat is on its way", n.cfg.ID)}
	}
	return true, nil
}
