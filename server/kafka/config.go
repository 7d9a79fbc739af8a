package kafka

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/group"
)

// Defaults of Config's zero fields.
const (
	// DefaultMaxRequestBytes is the largest request frame read when
	// Config.MaxRequestBytes is zero.
	DefaultMaxRequestBytes = 1 << 20
	// DefaultIdleTimeout is how long a connection may wait between two
	// requests (Kafka's connections.max.idle.ms is 9 minutes).
	DefaultIdleTimeout = 9 * time.Minute
	// DefaultFrameTimeout is how long a request may take to arrive once
	// its size prefix has: the bound on a slow-loris client.
	DefaultFrameTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds writing one response.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultReconcileEvery is how often the listeners are matched to the
	// brokers' availability.
	DefaultReconcileEvery = 100 * time.Millisecond
	// DefaultFetchMaxBytes caps a fetch's max_bytes.
	DefaultFetchMaxBytes = 4 << 20
	// DefaultMaxInflightBytes bounds the request frames held in memory at
	// once, server-wide.
	DefaultMaxInflightBytes = 256 << 20
	// DecompressRatio is how many times a request's size its compressed
	// records may inflate to when Config.MaxDecompressedBytes is zero.
	DecompressRatio = 8
	// MaxWait caps a fetch's max_wait_ms.
	MaxWait = 30 * time.Second
	// DefaultFetchRecheck is how often a waiting fetch looks again on
	// its own.
	DefaultFetchRecheck = 250 * time.Millisecond
)

// Config is the listener's configuration. The zero value of every field
// but Host takes the default its comment names.
type Config struct {
	// Host is the address every broker's listener binds to.
	Host string
	// AdvertisedHost is the host Metadata tells clients to connect to;
	// empty means Host.
	AdvertisedHost string
	// Port is broker 1's port: broker i listens on Port+i-1. Zero lets
	// each broker's first listener take a free port, which the broker
	// keeps when it is stopped and started again (tests). With NodeID,
	// Port is that broker's own port.
	Port int
	// NodeID, above zero, makes this the listener of one node of a
	// cluster of processes: it serves broker NodeID alone, on Port, for
	// as long as Serve runs (the process is the broker: when it stops,
	// its listener closes with it), and Metadata gives every broker the
	// address the cluster registered for it, so the Cluster handed to New
	// must be a Directory too. Zero serves every logical broker of an
	// embedded cluster.
	NodeID int
	// MaxRequestBytes caps a request frame's size prefix; a larger one
	// closes the connection (DefaultMaxRequestBytes).
	MaxRequestBytes int
	// MaxInflightBytes bounds the request frames held at once, and the
	// bytes produce requests' compressed records inflate to
	// (DefaultMaxInflightBytes); a frame that does not fit waits up to
	// FrameTimeout, then its connection is closed; a produce whose
	// records would not fit is POLICY_VIOLATION.
	MaxInflightBytes int64
	// MaxDecompressedBytes caps what one produce request's compressed
	// batches inflate to, all together (DecompressRatio times
	// MaxRequestBytes); past it, MESSAGE_TOO_LARGE.
	MaxDecompressedBytes int64
	// MaxRequestRecords caps the records of one produce request, all
	// partitions together (bounds.DefaultMaxRequestRecords, the HTTP
	// API's PYSTREAM_MAX_REQUEST_RECORDS); past it, MESSAGE_TOO_LARGE.
	MaxRequestRecords int
	// FetchMaxBytes caps a fetch's max_bytes and partition_max_bytes
	// (DefaultFetchMaxBytes); a fetch always returns at least one record
	// when one is there.
	FetchMaxBytes int
	// IdleTimeout, FrameTimeout and WriteTimeout bound a connection's
	// wait for a request, the arrival of a started request, and the
	// writing of a response (DefaultIdleTimeout, DefaultFrameTimeout,
	// DefaultWriteTimeout).
	IdleTimeout, FrameTimeout, WriteTimeout time.Duration
	// ReconcileEvery is how often listeners are opened and closed to
	// match the brokers' availability (DefaultReconcileEvery).
	ReconcileEvery time.Duration
	// Logger receives a line per listener change and per refused
	// connection or request; nil discards them.
	Logger *slog.Logger
	// Registerer receives the per-API metrics (and the group metrics of
	// a coordinator New builds); nil registers nothing.
	Registerer prometheus.Registerer
	// Groups is the classic group coordinator JoinGroup, SyncGroup,
	// Heartbeat, LeaveGroup and OffsetCommit use; the server shares it
	// with whoever shares its group.Registry. Nil makes New build one
	// of its own, with Kafka's defaults but no initial delay, closed
	// with the listener.
	Groups *group.ClassicCoordinator
	// Advances wakes a fetch waiting for records when the high watermark
	// of one of its partitions rises: the server's one "partition
	// advanced" event, fed by the cluster whatever protocol wrote. Nil
	// makes New build a hub of its own that only this listener's
	// produces feed.
	Advances *backend.Hub
	// WriteFailed, if set, is called when a produced partition's write
	// fails: the server wakes its controller, since a failed write may
	// have left a follower behind or found a leader gone, as an HTTP
	// write's failure does.
	WriteFailed func()
	// FetchRecheck is how often a waiting fetch looks again on its own,
	// for what no rise of a high watermark reports (a leader that
	// changed) (DefaultFetchRecheck).
	FetchRecheck time.Duration
	// OtherGroups lists and describes the groups of the other membership
	// protocol (the HTTP API's consumer groups), so that ListGroups and
	// DescribeGroups show every group; nil when there are none.
	OtherGroups group.Lister
	// Auth, when not nil, is the auth file (PYSTREAM_AUTH_FILE): every
	// connection must authenticate with SASL (PLAIN, SCRAM-SHA-256 or
	// SCRAM-SHA-512) before any request but ApiVersions, and each
	// request is authorized by the principal's role and prefixes
	// (authz.go). Nil: no authentication, every request served.
	Auth *auth.Set
	// TLS, when not nil, makes every listener speak TLS only (the
	// server's PYSTREAM_TLS_CERT and PYSTREAM_TLS_KEY, and with
	// PYSTREAM_TLS_CLIENT_CA a client certificate required): with Auth,
	// Kafka's SASL_SSL. Its NextProtos are ignored (Kafka has no ALPN).
	TLS *tls.Config
}

// withDefaults fills c's zero fields.
func (c Config) withDefaults() Config {
	if c.AdvertisedHost == "" {
		c.AdvertisedHost = c.Host
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxInflightBytes <= 0 {
		c.MaxInflightBytes = DefaultMaxInflightBytes
	}
	if c.MaxDecompressedBytes <= 0 {
		c.MaxDecompressedBytes = DecompressRatio * int64(c.MaxRequestBytes)
	}
	if c.MaxRequestRecords <= 0 {
		c.MaxRequestRecords = bounds.DefaultMaxRequestRecords
	}
	if c.FetchMaxBytes <= 0 {
		c.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.FrameTimeout <= 0 {
		c.FrameTimeout = DefaultFrameTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.FetchRecheck <= 0 {
		c.FetchRecheck = DefaultFetchRecheck
	}
	if c.ReconcileEvery <= 0 {
		c.ReconcileEvery = DefaultReconcileEvery
	}
	if c.TLS != nil {
		c.TLS = c.TLS.Clone()
		c.TLS.NextProtos = nil
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
