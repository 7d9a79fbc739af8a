package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/group"
)

// Server is the Kafka listener of every logical broker: it keeps one TCP
// listener open per available broker and closes it, with its connections,
// when the broker stops. It is safe for concurrent use.
type Server struct {
	cfg Config
	c   Cluster
	// dir is c as a Directory in node mode (Config.NodeID); nil otherwise.
	dir     Directory
	apis    map[int16]api
	metrics *metrics
	// advances wakes waiting fetches (Config.Advances); feedAdvances is
	// set when New built it, which this listener's produces then feed.
	advances     *backend.Hub
	feedAdvances bool
	inflight     *budget
	// acceptErrors counts the accepts retried for want of a descriptor
	// (bounds.Listener).
	acceptErrors prometheus.Counter
	// refusals logs the connections refused (a failed TLS handshake or
	// SASL authentication, a bad request), rate-limited, and counts them.
	refusals *bounds.Refusals
	// groups is the classic group coordinator (Config.Groups), others
	// the other protocol's groups (Config.OtherGroups, maybe nil);
	// ownGroups is set when New built groups, which Close then closes.
	groups    *group.ClassicCoordinator
	others    group.Lister
	ownGroups bool

	// mu guards the fields below it.
	mu sync.Mutex
	// listening maps a broker id to its open listener.
	listening map[int]*brokerListener
	// ports are the ports brokers were given when Config.Port is zero,
	// kept so that a restarted broker is found where it was.
	ports map[int]int
	// failing are the brokers whose last listen failed (logged once).
	failing map[int]bool
	closed  bool
	// conns counts the goroutines of listeners and connections.
	conns sync.WaitGroup
}

// brokerListener is one broker's listener and its open connections.
type brokerListener struct {
	id     int
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	// conns is guarded by Server.mu.
	conns map[net.Conn]struct{}
}

// New builds the listener of c's brokers; Serve opens it.
func New(c Cluster, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("kafka: port %d out of range", cfg.Port)
	}
	s := &Server{cfg: cfg, c: c, advances: cfg.Advances, inflight: &budget{left: cfg.MaxInflightBytes},
		listening: map[int]*brokerListener{}, ports: map[int]int{}, failing: map[int]bool{}}
	if s.advances == nil {
		s.advances, s.feedAdvances = backend.NewHub(), true
	}
	if cfg.NodeID < 0 {
		return nil, fmt.Errorf("kafka: node id %d below zero", cfg.NodeID)
	}
	if cfg.NodeID > 0 {
		dir, ok := c.(Directory)
		if !ok {
			return nil, fmt.Errorf("kafka: node %d: the cluster does not say where its brokers' listeners are (no KafkaAddrs)", cfg.NodeID)
		}
		s.dir = dir
	}
	s.apis = map[int16]api{}
	for _, a := range s.table() {
		s.apis[int16(a.key)] = a
	}
	m, err := newMetrics(cfg.Registerer, s.table())
	if err != nil {
		return nil, err
	}
	s.metrics = m
	if s.acceptErrors, err = bounds.AcceptErrors(cfg.Registerer, "kafka"); err != nil {
		return nil, err
	}
	if s.refusals, err = bounds.NewRefusals(cfg.Registerer, "kafka"); err != nil {
		return nil, err
	}
	s.groups, s.others = cfg.Groups, cfg.OtherGroups
	if s.groups == nil {
		gm, err := group.NewMetrics(cfg.Registerer)
		if err != nil {
			return nil, err
		}
		s.groups = group.NewClassicCoordinator(group.NewRegistry(), group.ClassicConfig{Metrics: gm, Logger: cfg.Logger})
		s.ownGroups = true
	}
	return s, nil
}

// Serve opens the listener of every available broker, keeps them matched
// to the brokers' availability every Config.ReconcileEvery until ctx is
// done, then closes every listener and connection and waits for them.
func (s *Server) Serve(ctx context.Context) error {
	s.Reconcile()
	t := time.NewTicker(s.cfg.ReconcileEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.Close()
			return nil
		case <-t.C:
			s.Reconcile()
		}
	}
}

// Reconcile runs one pass of Serve's loop: it opens a listener for every
// available broker without one and closes the listener (and connections)
// of every broker no longer available. A node's listener (Config.NodeID)
// is opened whatever the cluster reports: the node's process is its
// broker.
func (s *Server) Reconcile() {
	up := map[int]bool{}
	if s.cfg.NodeID > 0 {
		up[s.cfg.NodeID] = true
	} else {
		for _, b := range s.c.Brokers() {
			if b.Available {
				up[b.ID] = true
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for id, bl := range s.listening {
		if !up[id] {
			s.cfg.Logger.Info("kafka listener closed: broker stopped", "broker", id, "addr", bl.ln.Addr().String())
			s.closeLocked(bl)
		}
	}
	for id := range up {
		if _, ok := s.listening[id]; !ok {
			s.listenLocked(id)
		}
	}
}

// listenLocked opens broker id's listener. Lock should be held.
func (s *Server) listenLocked(id int) {
	port := s.ports[id]
	if s.cfg.Port > 0 {
		port = s.configuredPort(id)
	}
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(port))
	if port > 65535 {
		s.listenFailedLocked(id, addr, errors.New("port above 65535"))
		return
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		s.listenFailedLocked(id, addr, err)
		return
	}
	// An accept that fails for want of a descriptor waits and resumes.
	var ln net.Listener = bounds.Guard(tcp, "kafka", s.cfg.Logger.With("broker", id), s.acceptErrors)
	delete(s.failing, id)
	if s.cfg.Port == 0 {
		s.ports[id] = ln.Addr().(*net.TCPAddr).Port
	}
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	ctx, cancel := context.WithCancel(context.Background())
	bl := &brokerListener{id: id, ln: ln, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
	s.listening[id] = bl
	s.cfg.Logger.Info("kafka listener open", "broker", id, "addr", ln.Addr().String(),
		"advertised", net.JoinHostPort(s.cfg.AdvertisedHost, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)),
		"sasl", s.cfg.Auth != nil, "tls", s.cfg.TLS != nil)
	s.conns.Add(1)
	go s.accept(bl)
}

// listenFailedLocked logs a failed listen once until it succeeds; the
// next pass tries again. Lock should be held.
func (s *Server) listenFailedLocked(id int, addr string, err error) {
	if !s.failing[id] {
		s.cfg.Logger.Warn("kafka listener cannot open; retrying", "broker", id, "addr", addr, "err", err)
	}
	s.failing[id] = true
}

// closeLocked closes bl and its connections. Lock should be held.
func (s *Server) closeLocked(bl *brokerListener) {
	bl.cancel()
	_ = bl.ln.Close()
	for nc := range bl.conns {
		_ = nc.Close()
	}
	delete(s.listening, bl.id)
}

// accept serves bl's connections until it is closed. Accepts that fail
// for want of a file descriptor are retried by bl.ln (bounds.Listener);
// any other failure ends the listener, logged, and the next Reconcile
// opens it again.
func (s *Server) accept(bl *brokerListener) {
	defer s.conns.Done()
	for {
		nc, err := bl.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.mu.Lock()
			if bl.ctx.Err() == nil {
				s.cfg.Logger.Error("kafka listener failed; opening it again", "broker", bl.id, "addr", bl.ln.Addr().String(), "err", err)
				s.closeLocked(bl)
			}
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		if bl.ctx.Err() != nil {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		bl.conns[nc] = struct{}{}
		s.conns.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.conns.Done()
			c := &conn{s: s, broker: bl.id, nc: nc, ctx: bl.ctx}
			c.serve()
			s.mu.Lock()
			delete(bl.conns, nc)
			s.mu.Unlock()
			_ = nc.Close()
		}()
	}
}

// Addr is broker id's listening address, "" while it has none.
func (s *Server) Addr(id int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bl, ok := s.listening[id]; ok {
		return bl.ln.Addr().String()
	}
	return ""
}

// configuredPort is broker id's port when Config.Port is set: Port+id-1,
// or Port itself for a node's one broker.
func (s *Server) configuredPort(id int) int {
	if s.cfg.NodeID > 0 {
		return s.cfg.Port
	}
	return s.cfg.Port + id - 1
}

// advertised is the host and port Metadata gives for broker id; ok false
// for a broker that has no port yet (Config.Port zero, never opened) and,
// in node mode, for a broker dir (the registered addresses) has none for.
func (s *Server) advertised(id int, dir map[int]string) (string, int32, bool) {
	if s.dir != nil {
		host, port, err := net.SplitHostPort(dir[id])
		if err != nil {
			return "", 0, false
		}
		p, err := strconv.ParseUint(port, 10, 16)
		return host, int32(p), err == nil && p > 0
	}
	if s.cfg.Port > 0 {
		return s.cfg.AdvertisedHost, int32(s.configuredPort(id)), true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.ports[id]
	return s.cfg.AdvertisedHost, int32(p), ok
}

// advertisedNow is advertised with the registered addresses as they are
// now (node mode), for an answer that names one broker.
func (s *Server) advertisedNow(id int) (string, int32, bool) {
	var dir map[int]string
	if s.dir != nil {
		dir = s.dir.KafkaAddrs()
	}
	return s.advertised(id, dir)
}

// Close closes every listener and connection and waits for their
// goroutines. Closing twice is harmless.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for _, bl := range s.listening {
		s.closeLocked(bl)
	}
	s.mu.Unlock()
	s.conns.Wait()
	if s.ownGroups {
		s.groups.Close()
	}
}
