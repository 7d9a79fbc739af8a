package server

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertls"
	"github.com/pystream/pystream/server/controller"
	"github.com/pystream/pystream/server/datalock"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/server/httpapi"
	"github.com/pystream/pystream/server/kafka"
)

// Timeouts of the HTTP server. They bound how long a slow or stalled client
// can hold a connection; none of them limits a well-behaved request.
const (
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout = 30 * time.Second
	// WriteTimeout bounds the time from the end of the request headers to
	// the end of the answer.
	WriteTimeout = 30 * time.Second
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request.
	IdleTimeout = 120 * time.Second
	// ShutdownTimeout bounds how long a shutdown waits for in-flight
	// requests to finish.
	ShutdownTimeout = 10 * time.Second
)

// Server is a PyStream server: the cluster it opens (the embedded one,
// or this process's node of a cluster of processes), the protocols that
// serve it — the HTTP API (server/httpapi) and the Kafka listener
// (server/kafka) — and what they share: the consumer groups, the metrics
// registry, the partition advanced event. It builds them all; none of
// them knows it. It is safe for concurrent use.
type Server struct {
	cfg    Config
	logger *slog.Logger
	// maxBody and fetchBytes are PYSTREAM_MAX_REQUEST_BYTES and
	// PYSTREAM_FETCH_MAX_BYTES with their defaults, which the Kafka
	// listener applies too.
	maxBody    int64
	fetchBytes int
	// cluster is what the protocols serve: the embedded cluster (local) or,
	// in cluster mode, this process's broker among others.
	cluster clusterBackend
	// advances is the one "partition advanced" event, fed by the
	// cluster each time a high watermark rises; waiting Kafka fetches and
	// the explorer watch it.
	advances *backend.Hub
	// members is the metadata group of a cluster of processes; nil for
	// the embedded cluster, which has none.
	members backend.Membership
	// local is the embedded cluster; nil in cluster mode.
	local *backend.Local
	// node is this process's node in cluster mode; nil otherwise.
	node *clusternode.Node
	// clusterTLS is this node's identity on the internal port
	// (exposure_internal.go); nil without cluster TLS.
	clusterTLS *clustertls.Identity
	// nodeConfig, when set (tests), adjusts cluster mode's node
	// configuration before it opens: in-memory transports in place of
	// the PYSTREAM_CLUSTER addresses.
	nodeConfig func(*clusternode.Config)
	lock       *datalock.Lock
	// stopController ends the embedded cluster's controller loop and
	// waits for it.
	stopController func()
	// stopRetention stops the retention loop (retention.go),
	// stopTransactions the transaction coordinator's (transactions.go).
	stopRetention    func()
	stopTransactions func()
	metrics          *metrics
	// api is the HTTP API; handler is what Serve serves, the API (a test
	// swaps it).
	api     *httpapi.API
	handler http.Handler
	// tls is the TLS configuration Serve wraps its listener in, or nil
	// for plain HTTP (tls.go).
	tls *tls.Config
	// auth is the auth file's credentials, nil without one: the HTTP
	// API's bearer tokens and the Kafka listener's SASL principals.
	auth *auth.Set
	// fileLimit is the open-file limit after the start raised it, and
	// maxOpenLogs the replica-log cap derived from it (fdlimit.go).
	fileLimit   FileLimit
	maxOpenLogs int
	// kafka is the Kafka listener, built by the first Serve that starts
	// it (kafka_wiring.go); kafkaFreePorts has it take free ports instead
	// of PYSTREAM_KAFKA_PORT (tests set it before serving).
	// kafkaFetchRecheck is kafka.Config.FetchRecheck (tests raise it, to
	// show that a fetch is woken by the partition advanced event alone).
	kafka             atomic.Pointer[kafka.Server]
	kafkaFreePorts    bool
	kafkaFetchRecheck time.Duration
	// groups keeps each consumer group to one membership protocol, HTTP
	// or Kafka's classic, for both coordinators (groups.go): classic,
	// which the Kafka listener serves, and consumerGroups, the HTTP
	// groups' (server/httpapi).
	groups         *group.Registry
	classic        *group.ClassicCoordinator
	consumerGroups *group.ConsumerCoordinator
	// restarted is set when a server ran in the data directory before
	// (its lock file was there), and coordinating while this server
	// coordinates groups in cluster mode; otherLed is set once another
	// node led the metadata group (groups.go, leaderChanged).
	restarted    bool
	coordinating atomic.Bool
	otherLed     bool
	// nodeOpen is closed once node is set; groupsStop when the server
	// closes. A coordinator that starts in cluster mode waits on them to
	// read the groups' saved leases (restoreGroups).
	nodeOpen      chan struct{}
	groupsStop    chan struct{}
	closeGroupsMu sync.Once
	// readTimeout and writeTimeout are ReadTimeout and WriteTimeout (tests
	// lower them before serving, to show that the events stream outlives
	// them).
	readTimeout, writeTimeout time.Duration
}

// clusterBackend is what the server opens and its protocols serve: the
// embedded cluster (backend.Local) or a node of a cluster of processes
// (nodebackend.Backend).
type clusterBackend interface {
	backend.Data
	backend.TopicAdmin
	backend.Storage
	backend.Operator
	// Root is the data directory; the API never shows it.
	Root() string
	Close() error
}

// New opens the embedded cluster under cfg.DataDir and builds the server
// that serves it, logging to logger:
//
//  1. it creates the data directory if needed (durably: every new
//     directory is fsync-ed into its parent) and takes the exclusive lock
//     on its .lock file with datalock.Acquire (a *datalock.LockedError when
//     another server holds it);
//  2. it opens the cluster there (cluster.meta restores topics, placement,
//     leaders and active sets) with every fsync timed for /metrics;
//  3. it starts brokers 1..cfg.Brokers;
//  4. it starts the controller loop (server/controller), whose first pass
//     opens every replica log and catches up what a crash left behind;
//     GET /api/ready answers 200 only after it.
//
// The caller must Close the server when done, after serving has stopped.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	return newServer(cfg, logger, durable.OS)
}

// newServer is New on the file system fsys (tests simulate crashes with a
// logtest.CrashFS); each of tweaks edits the server before its pieces are
// built (tests lower its timeouts).
func newServer(cfg Config, logger *slog.Logger, fsys durable.FS, tweaks ...func(*Server)) (*Server, error) {
	s := &Server{cfg: cfg, logger: logger, maxBody: int64(cfg.MaxRequestBytes), fetchBytes: MaxFetchBytes, metrics: newMetrics(),
		readTimeout: ReadTimeout, writeTimeout: WriteTimeout, advances: backend.NewHub(),
		nodeOpen: make(chan struct{}), groupsStop: make(chan struct{})}
	for _, tweak := range tweaks {
		tweak(s)
	}
	if err := s.openGroups(); err != nil {
		return nil, err
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxRequestBytes
	}
	tlsConfig, err := TLSConfig(cfg)
	if err != nil {
		return nil, err
	}
	s.tls = tlsConfig
	// Zero values (a Config built by hand) take the defaults.
	if cfg.FetchMaxBytes > 0 {
		s.fetchBytes = int(cfg.FetchMaxBytes)
	}
	tokens, err := s.loadAuth()
	if err != nil {
		return nil, err
	}
	if tokens != nil {
		s.auth = auth.NewSet(tokens)
	}
	lim, err := RaiseFileLimit()
	if err != nil {
		logger.Warn("the open-file limit could not be raised; replica logs are capped below the current one", "err", err)
	}
	s.fileLimit, s.maxOpenLogs = lim, maxOpenLogs(cfg, lim)
	_, statErr := fsys.Stat(datalock.Path(cfg.DataDir))
	s.restarted = statErr == nil
	lock, err := datalock.Acquire(fsys, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s.lock = lock
	if cfg.ClusterMode() {
		if err := s.openClusterNode(fsys); err != nil {
			return nil, errors.Join(err, s.lock.Release())
		}
	} else {
		if err := s.openCluster(fsys); err != nil {
			return nil, errors.Join(err, s.lock.Release())
		}
		s.startGroups()
		if err := s.startController(); err != nil {
			return nil, errors.Join(err, s.Close())
		}
	}
	s.metrics.registerCluster(s.cluster)
	if err := s.openAPI(); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	s.startRetention(cmp.Or(s.cfg.RetentionCheckInterval.Duration(), 5*time.Minute))
	s.startTransactions()
	return s, nil
}

// brokerOptions are the options of this server's brokers, in either
// mode: their files on fsys with every fsync timed for /metrics, their
// repairs in the server's log, their appends made durable as
// PYSTREAM_SHARED_SYNC says.
func (s *Server) brokerOptions(fsys durable.FS) cluster.BrokerOptions {
	o := cluster.BrokerOptions{FS: timedFS{FS: fsys, file: s.metrics.fsyncFile, dir: s.metrics.fsyncDir, whole: s.metrics.fsyncFS},
		Logf: func(format string, args ...any) { s.logger.Warn(fmt.Sprintf(format, args...)) }}
	switch s.cfg.SharedSync {
	case SyncJournal:
		o.Journal = true
	case SyncOwnFile:
		o.Sync = durable.File.Sync // nil: the cluster's sync group
	}
	return o
}

// openCluster opens the cluster at the data directory on fsys and starts
// brokers 1..cfg.Brokers. A broker that cluster.meta knows but whose id is
// above cfg.Brokers stays unavailable (and is logged), so its partitions
// need a failover to be written again.
func (s *Server) openCluster(fsys durable.FS) error {
	bopts := s.brokerOptions(fsys)
	c, err := cluster.OpenWithOptions(s.cfg.DataDir, cluster.Options{FS: bopts.FS, MaxOpenLogs: s.maxOpenLogs,
		TopicDefaults: s.cfg.TopicDefaults(), Advanced: s.advances.Advanced, Broker: bopts})
	if err != nil {
		return fmt.Errorf("server: open cluster in %s: %w", s.cfg.DataDir, err)
	}
	for id := 1; id <= int(s.cfg.Brokers); id++ {
		if _, err := c.StartBroker(id); err != nil {
			return errors.Join(fmt.Errorf("server: start broker %d: %w", id, err), c.Close())
		}
	}
	for _, b := range c.Brokers() {
		if !b.Available {
			s.logger.Warn("broker known to the cluster is not started; set PYSTREAM_BROKERS to include it",
				"broker", b.ID, "brokers", int(s.cfg.Brokers))
		}
	}
	s.logSyncs(c)
	s.local = &backend.Local{Cluster: c, FailoverAfter: s.cfg.FailoverAfter.Duration(), DefaultFailoverAfter: DefaultFailoverAfter}
	s.cluster = s.local
	return nil
}

// logSyncs says at start how the partitions' appends are made durable:
// through each broker's commit journal, sharing syncs of the file system,
// or each fsyncing its own file (asked for, or because the file system or
// kernel does not allow a shared sync).
func (s *Server) logSyncs(c *cluster.Cluster) {
	switch {
	case s.cfg.SharedSync == SyncJournal:
		s.logger.Info("partitions' appends are made durable through each broker's commit journal (PYSTREAM_SHARED_SYNC=journal)", "dir", s.cfg.DataDir)
	case c.SyncsShared():
		s.logger.Info("partitions' appends share syncs of the file system (PYSTREAM_SHARED_SYNC=syncfs)", "dir", s.cfg.DataDir)
	case s.cfg.SharedSync == SyncFileSystem:
		s.logger.Info("partitions' appends fsync their own files: the data directory's file system or the kernel does not allow a shared sync (docs/design.md § One sync for many partitions)", "dir", s.cfg.DataDir)
	default:
		s.logger.Info("partitions' appends fsync their own files (PYSTREAM_SHARED_SYNC=off)", "dir", s.cfg.DataDir)
	}
}

// openAPI builds the HTTP API over the cluster: the mode's differences
// are chosen here, once — the brokers as the configuration names them,
// and the metadata group's membership in cluster mode alone.
func (s *Server) openAPI() error {
	var brokers httpapi.Brokers = httpapi.EmbeddedBrokers(s.cfg.Brokers)
	if s.cfg.ClusterMode() {
		brokers = httpapi.ProcessBrokers(len(s.cfg.Cluster))
	}
	api, err := httpapi.New(httpapi.Config{
		Logger: s.logger, Metrics: s.metrics.registry, AppName: s.cfg.AppName, Root: s.cluster.Root(),
		Brokers: brokers, Advances: s.advances,
		Groups:          httpapi.Groups{Registry: s.groups, Consumer: s.consumerGroups, Classic: s.classic, Home: groupHome{s}},
		MaxRequestBytes: s.maxBody, MaxRequestRecords: int(s.cfg.MaxRequestRecords), MaxInflightBytes: int64(s.cfg.MaxInflightBytes),
		FetchMaxBytes: s.fetchBytes, WriteTimeout: s.writeTimeout,
		Auth: s.auth, Host: s.cfg.Host, AllowedHosts: s.cfg.AllowedHosts, AllowedOrigins: s.cfg.AllowedOrigins,
	}, httpapi.Backend{Data: s.cluster, Admin: s.cluster, Operator: s.cluster, Membership: s.members})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.api, s.handler = api, api
	return nil
}

// startController builds the controller from the configuration and runs
// its loop until Close.
func (s *Server) startController() error {
	k, err := controller.New(s.local.Cluster, controller.Config{
		FailoverAfter: s.cfg.FailoverAfter.Duration(),
		Rebalance:     bool(s.cfg.LeaderRebalance),
		Logger:        s.logger,
		Registerer:    s.metrics.registry,
	})
	if err != nil {
		return fmt.Errorf("server: start controller: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.Run(ctx)
	}()
	s.local.Controller = k
	s.stopController = func() {
		cancel()
		<-done
	}
	return nil
}

// Close stops the controller, closes the cluster (every broker's logs) and
// releases the data directory's lock. Call it after Serve has returned;
// closing twice is harmless.
func (s *Server) Close() error {
	var errs []error
	if s.api != nil {
		_ = s.api.Close()
	}
	if s.classic != nil {
		s.classic.Close()
	}
	if s.consumerGroups != nil {
		s.consumerGroups.Close()
	}
	s.closeGroupsMu.Do(func() { close(s.groupsStop) })
	if s.stopRetention != nil {
		s.stopRetention()
		s.stopRetention = nil
	}
	if s.stopTransactions != nil {
		s.stopTransactions()
		s.stopTransactions = nil
	}
	if s.stopController != nil {
		s.stopController()
		s.stopController = nil
	}
	if s.cluster != nil {
		errs = append(errs, s.cluster.Close())
	}
	errs = append(errs, s.lock.Release())
	return errors.Join(errs...)
}

// StopDeadline bounds Close in cluster mode (clusternode.StopDeadline of
// the failover delay): a node whose peers are paused or cut off must still
// stop when told. Zero in the embedded mode, whose Close waits on nothing
// but its own disks.
func (s *Server) StopDeadline() time.Duration {
	if s.node == nil {
		return 0
	}
	return clusternode.StopDeadline(s.cfg.FailoverAfter.Duration())
}

// CloseWithin is Close bounded by d (zero: unbounded). When Close has not
// returned by then it returns a *StopTimeoutError (ErrStopTimeout) with
// the stacks of every goroutine, and leaves Close running: the caller is
// about to exit, and every record the server acknowledged is on disk
// already; what a stop cut short is what a kill cuts short.
func (s *Server) CloseWithin(d time.Duration) error { return closeWithin(d, s.Close) }

// StopTimeoutError is CloseWithin's error when closing outlived its
// deadline: Stacks is what every goroutine was doing then, for the log,
// so that what held the stop can be found.
type StopTimeoutError struct {
	Deadline time.Duration
	Stacks   string
}

func (e *StopTimeoutError) Error() string {
	return fmt.Sprintf("%v (%v)", ErrStopTimeout, e.Deadline)
}

func (e *StopTimeoutError) Unwrap() error { return ErrStopTimeout }

// maxStopStacks bounds the stacks a StopTimeoutError keeps.
const maxStopStacks = 1 << 20

// closeWithin runs closeFn, and gives up waiting for it after d.
func closeWithin(d time.Duration, closeFn func() error) error {
	if d <= 0 {
		return closeFn()
	}
	done := make(chan error, 1)
	go func() { done <- closeFn() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		buf := make([]byte, maxStopStacks)
		return &StopTimeoutError{Deadline: d, Stacks: string(buf[:runtime.Stack(buf, true)])}
	}
}

// Cluster returns the embedded cluster, for tests and embedding; nil in
// cluster mode.
func (s *Server) Cluster() *cluster.Cluster {
	if s.local == nil {
		return nil
	}
	return s.local.Cluster
}

// Handler returns the server's HTTP handler, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.handler }

// ListenAndServe listens on the configured address and serves until ctx is
// done, then shuts down gracefully (see Serve). When the address cannot be
// bound the error wraps the system error, so
// errors.Is(err, syscall.EADDRINUSE) tells an address in use.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := Listen(s.cfg)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Listen opens the TCP listener of cfg's address. Main calls it before New,
// so that a server that cannot bind creates nothing; errors.Is(err,
// syscall.EADDRINUSE) tells an address in use.
func Listen(cfg Config) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", cfg.Addr())
	if err != nil {
		return nil, fmt.Errorf("server: listen on %s: %w", cfg.Addr(), err)
	}
	return ln, nil
}

// Serve answers requests on ln until ctx is done; when the configuration
// turns TLS on, ln is a plain TCP listener that Serve wraps in TLS. It logs
// one start-up line with the address, the scheme, the version, the data
// directory, the broker count, the open-file limit (soft, after the start
// raised it to the hard one, and hard) and the replica-log cap derived
// from it.
// When ctx is done it stops accepting connections, waits
// up to ShutdownTimeout for in-flight requests to finish, and returns nil on
// a clean shutdown. Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       s.readTimeout,
		WriteTimeout:      s.writeTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    httpapi.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), LevelWarning),
	}
	// The events streams never end on their own: a shutdown ends them,
	// or it would wait ShutdownTimeout for them.
	srv.RegisterOnShutdown(func() { s.api.EndStreamsOf(srv) })
	addr := ln.Addr().String()
	// An accept that fails for want of a descriptor waits and resumes,
	// logged once per episode, rather than net/http's line per failure.
	acceptErrors, err := bounds.AcceptErrors(s.metrics.registry, "http")
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("server: %w", err)
	}
	ln = bounds.Guard(ln, "http", s.logger, acceptErrors)
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
		s.logTLS()
	}
	base := s.cfg.Scheme() + "://" + addr
	attrs := []any{"addr", addr, "scheme", s.cfg.Scheme(), "version", Version, "data_dir", s.cluster.Root()}
	if s.node != nil {
		attrs = append(attrs, "node", int(s.cfg.NodeID), "cluster", s.cfg.Cluster.String())
	} else {
		attrs = append(attrs, "brokers", int(s.cfg.Brokers))
	}
	attrs = append(attrs, "open_files_soft", s.fileLimit.Soft, "open_files_hard", s.fileLimit.Hard,
		"max_open_logs", s.maxOpenLogs, "health", base+"/api/health", "docs", base+"/docs", "explorer", base+"/explorer")
	s.logger.Info("pystream-server listening", attrs...)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stopKafka := s.startKafka()
	defer stopKafka()

	select {
	case err := <-served:
		// Serve returns only on a listener failure before any shutdown.
		return fmt.Errorf("server: serve on %s: %w", addr, err)
	case <-ctx.Done():
	}

	s.logger.Info("shutting down: finishing in-flight requests", "timeout", ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: serve on %s: %w", addr, err)
	}
	s.logger.Info("stopped")
	return nil
}
