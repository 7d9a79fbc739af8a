package server

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/server/syntax"
	"github.com/pystream/pystream/topic"
)

// EnvPrefix is the prefix of every configuration variable.
const EnvPrefix = "PYSTREAM"

// Config is the server's configuration, read from PYSTREAM_* environment
// variables (and a .env file) by Load. The struct tags are the single source
// of each variable's name, default and description: envconfig reads them, and
// so do Usage and the tests that keep README.md and .env.example in step.
//
// Multi-word fields carry split_words:"true" so that LogLevel is read from
// PYSTREAM_LOG_LEVEL; without it envconfig would look for
// PYSTREAM_LOGLEVEL. No field has an envconfig:"NAME" tag, because such a
// tag makes envconfig fall back to the unprefixed NAME variable (HOST, PORT)
// when the prefixed one is unset.
//
// A new variable is a new field with a comment, a default and a desc tag,
// plus a row in README.md and a line in .env.example.
type Config struct {
	// AppName is the service name reported by GET /api/health.
	AppName string `split_words:"true" default:"pystream" desc:"Application name reported by the API"`

	// Host is the address the HTTP server binds to: an IP address or a
	// host name. The default keeps the server on the loopback interface.
	Host string `default:"127.0.0.1" desc:"Bind address: an IP address or host name"`

	// Port is the TCP port the HTTP server binds to.
	Port Port `default:"8000" desc:"Bind port: a decimal integer from 1 to 65535"`

	// KafkaPort is broker 1's Kafka wire-protocol port: broker i of the
	// embedded cluster listens on KafkaPort+i-1 while it is available
	// (package server/kafka). In cluster mode it is this node's own
	// port, and each process has its own. Zero turns the Kafka listener
	// off.
	KafkaPort KafkaPort `split_words:"true" default:"9092" desc:"Kafka protocol port of broker 1; broker i listens on this + i - 1, on PYSTREAM_HOST (cluster mode: this node's own port): 0 (off) to 65535"`

	// KafkaAdvertisedHost is the host Kafka clients are told (Metadata)
	// to connect to; empty means Host.
	KafkaAdvertisedHost string `split_words:"true" desc:"Host name or address Kafka clients are told to connect to; empty = PYSTREAM_HOST"`

	// GroupInitialDelay is how long a new consumer group's first
	// rebalance waits for more members before it completes, each new
	// member extending it (Kafka's group.initial.rebalance.delay.ms,
	// 3 s there). PyStream's default is 0: a learner's consumers on a
	// small single-server log, started together or one at a time, would
	// otherwise wait 3 s at every first join; raise it when many members
	// of one group start at once and each extra rebalance costs more than
	// the wait.
	GroupInitialDelay GroupDelay `split_words:"true" default:"0s" desc:"How long a new Kafka consumer group's first rebalance waits for more members (Kafka's group.initial.rebalance.delay.ms, 3s there): a duration such as 0s or 3s, up to 5m"`

	// GroupMinSessionTimeout is the shortest session timeout a Kafka
	// group member may ask for (Kafka's group.min.session.timeout.ms);
	// a join asking for less is refused INVALID_SESSION_TIMEOUT. Lower it
	// to watch session timeouts without waiting (tests, demonstrations).
	GroupMinSessionTimeout GroupSessionTimeout `split_words:"true" default:"6s" desc:"Shortest session timeout a Kafka consumer group member may ask for (Kafka's group.min.session.timeout.ms): a duration such as 6s or 100ms, from 1ms to 30m"`

	// LogLevel is the lowest level that is logged.
	LogLevel LogLevel `split_words:"true" default:"INFO" desc:"DEBUG, INFO, WARNING (or WARN), ERROR or CRITICAL, in any case"`

	// LogFormat chooses text or JSON log lines on stderr.
	LogFormat LogFormat `split_words:"true" default:"text" desc:"Log line format: text or json"`

	// DataDir is the directory of the embedded cluster: cluster.meta, one
	// broker-NNNNNN directory per broker, consumer offsets, and the .lock
	// file that keeps a second server away. Created when missing.
	DataDir string `split_words:"true" default:"./data" desc:"Directory of the embedded cluster (created when missing; locked while the server runs)"`

	// Brokers is the number of logical brokers the server runs, with ids
	// 1..Brokers. Raising it adds brokers for topics created later; a
	// lower value leaves the brokers above it unavailable.
	Brokers BrokerCount `default:"3" desc:"Number of logical brokers, ids 1..N: 1 to 64"`

	// MaxRequestBytes caps every request body; a larger one is answered
	// 413 before it is read to the end, chunked bodies included.
	MaxRequestBytes RequestBytes `split_words:"true" default:"1048576" desc:"Largest request body in bytes (larger answers 413): 1024 to 1073741824"`

	// MaxRequestRecords caps the records of one produce request; more
	// answers 413, counted before the body is decoded.
	MaxRequestRecords RecordCount `split_words:"true" default:"10000" desc:"Most records in one produce request (more answers 413): 1 to 1000000"`

	// MaxInflightBytes bounds the request bodies being read and handled at
	// once, by their Content-Length (a chunked body counts as
	// PYSTREAM_MAX_REQUEST_BYTES); past it a request is answered 503 with
	// Retry-After before its body is read.
	MaxInflightBytes InflightBytes `split_words:"true" default:"268435456" desc:"Most request body bytes in flight server-wide (past it 503 with Retry-After): 1048576 to 1099511627776"`

	// FetchMaxBytes caps a fetch's max_bytes: the value bytes at which a
	// fetch answer stops (it always holds at least one record).
	FetchMaxBytes FetchBytes `split_words:"true" default:"4194304" desc:"Largest max_bytes of a fetch, the value bytes at which an answer stops (at least one record): 1024 to 1073741824"`

	// FailoverAfter is how long a partition's leader broker may be
	// unavailable before the controller fails the partition over (and how
	// long an active follower may be unavailable before it leaves the
	// active set). Zero turns both off: the manual mode of phase 5.
	FailoverAfter FailoverDelay `split_words:"true" default:"3s" desc:"Fail a partition over when its leader's broker has been unavailable this long: a duration such as 3s or 500ms, up to 1h; 0 = never (manual failover)"`

	// MaxOpenLogs caps the replica logs of all topics together (each is
	// an open file while the server runs): a topic whose partitions ×
	// replication factor would pass it is refused with 409. Zero derives it
	// from the process's open-file limit, raised to its hard limit at
	// start: three quarters of it, at least 256 descriptors left free
	// (cluster.DefaultMaxOpenLogs).
	MaxOpenLogs OpenLogs `split_words:"true" default:"0" desc:"Most replica logs (one open file each) of all topics together; a topic past it is refused with 409: 0 = three quarters of the open-file limit, else 1 to 16777216"`

	// SharedSync is how the partitions' appends are made durable: by
	// default through each broker's commit journal, one fsync of one file
	// for every append in flight on any of its replicas
	// (docs/design.md § The commit journal); syncfs shares one sync of the
	// whole file system instead (docs/design.md § One sync for many partitions); off has each
	// partition's log fsync its own file, as phase 1's log does. Whichever,
	// nothing is acknowledged before it is durable on every active
	// replica, and a broker replays any journal it finds.
	SharedSync SyncMode `split_words:"true" default:"journal" desc:"How the partitions' appends are made durable: journal (one fsync of each broker's commit journal for every append in flight), syncfs (one sync of the file system), or off (each partition's file its own fsync)"`

	// RetentionCheckInterval is how often the retention pass deletes the
	// segments each topic's retention.ms and retention.bytes let go
	// (Kafka's log.retention.check.interval.ms).
	RetentionCheckInterval CheckInterval `split_words:"true" default:"5m" desc:"How often old segments are deleted by each topic's retention.ms and retention.bytes: a duration such as 5m or 30s, from 100ms to 24h"`

	// LeaderRebalance lets the controller move leadership back to each
	// partition's preferred replica once it is active and caught up.
	LeaderRebalance Switch `split_words:"true" default:"on" desc:"Move leadership back to the preferred replica once it is caught up: on or off"`

	// GroupSessionTimeout is how long a member of an HTTP consumer group
	// may go without a heartbeat before it is removed and its partitions
	// move to the others; GroupHeartbeatInterval how often members
	// heartbeat (the server tells them), and the longest a heartbeat waits
	// for a rebalance before it is answered. Their defaults are Kafka's
	// group.consumer.session.timeout.ms (45 s) and
	// group.consumer.heartbeat.interval.ms (5 s); the interval must be
	// shorter than the session timeout (docs/groups.md § Timeouts).
	GroupSessionTimeout    GroupTimeout `split_words:"true" default:"45s" desc:"HTTP consumer groups: a member without a heartbeat this long is removed and its partitions move: a duration such as 45s or 500ms, from 10ms to 1h"`
	GroupHeartbeatInterval GroupTimeout `split_words:"true" default:"5s" desc:"HTTP consumer groups: how often members heartbeat (and the longest a heartbeat waits for a rebalance), shorter than PYSTREAM_GROUP_SESSION_TIMEOUT: a duration from 10ms to 1h"`

	// RetentionMs, RetentionBytes, SegmentBytes and SegmentMs are the
	// server-wide topic configuration: every topic's retention.ms,
	// retention.bytes, segment.bytes and segment.ms unless the topic
	// overrides the key (docs/design.md § Topic configuration). Each is
	// checked by the topic layer's rule for its key (package topic).
	RetentionMs    TopicRetentionMs    `split_words:"true" default:"604800000" desc:"Default retention.ms of every topic: how long records are kept, in ms; -1 = for ever"`
	RetentionBytes TopicRetentionBytes `split_words:"true" default:"-1" desc:"Default retention.bytes of every topic: bytes kept per partition replica; -1 = no limit"`
	SegmentBytes   TopicSegmentBytes   `split_words:"true" default:"134217728" desc:"Default segment.bytes of every topic: a log's segment size, 1024 to 1073741824"`
	SegmentMs      TopicSegmentMs      `split_words:"true" default:"604800000" desc:"Default segment.ms of every topic: a log's segment age before it rolls, in ms, from 1"`

	// TLSCert and TLSKey are the PEM files of the server's certificate
	// chain and private key. Both set: the HTTP API speaks only HTTPS
	// (TLS 1.2 or later). Neither: plain HTTP. One alone is refused.
	TLSCert string `split_words:"true" desc:"PEM certificate chain of the server; with PYSTREAM_TLS_KEY, the API is served over HTTPS only"`
	TLSKey  string `split_words:"true" desc:"PEM private key of PYSTREAM_TLS_CERT"`

	// TLSClientCA is a PEM file of CA certificates. Set (with TLSCert),
	// every client must present a certificate signed by one of them:
	// mutual TLS.
	TLSClientCA string `split_words:"true" desc:"PEM CA certificates; when set, clients must present a certificate they signed (mutual TLS)"`
	// AuthFile is the file of tokens and SCRAM credentials that guards
	// the HTTP API and the Kafka listener (server/auth's doc.go has its
	// format).
	// Empty: no authentication, which is allowed on a loopback Host only
	// unless Insecure says otherwise.
	AuthFile string `split_words:"true" desc:"File of tokens for HTTP and Kafka (name, role, sha256 hash or SCRAM credential, topic prefixes; docs/security.md); empty = no authentication, loopback only"`

	// Insecure lets a server bind a non-loopback Host without an auth
	// file, or with one but without TLS, and run cluster mode's internal
	// port in the clear off loopback (docs/security.md § Safe defaults).
	// It is logged as a warning at every start.
	Insecure Switch `default:"off" desc:"Serve non-loopback addresses without authentication or without TLS (PYSTREAM_AUTH_FILE, PYSTREAM_TLS_CERT, PYSTREAM_CLUSTER_TLS_CERT): on or off"`

	// AllowedOrigins are the browser origins, besides the server's own,
	// that may send requests (and get CORS answers). Empty: none.
	AllowedOrigins OriginList `split_words:"true" desc:"Comma-separated browser origins (scheme://host[:port]) allowed besides the server's own; empty = none (CORS off)"`

	// AllowedHosts are the Host header names the server answers to
	// besides loopback names, IP addresses and Host. "*" allows any.
	AllowedHosts HostList `split_words:"true" desc:"Comma-separated Host header names answered besides localhost, IP addresses and PYSTREAM_HOST (against DNS rebinding); * = any"`

	// NodeID and Cluster turn on cluster mode (docs/phase-7-processes.md):
	// this process is broker NodeID of the cluster whose nodes Cluster
	// lists with their internal addresses (Raft and replication). Both
	// empty: the embedded cluster of PYSTREAM_BROKERS logical brokers.
	NodeID  NodeID      `split_words:"true" desc:"Cluster mode: this process's broker id, one of PYSTREAM_CLUSTER's; empty = the embedded cluster of logical brokers"`
	Cluster ClusterList `desc:"Cluster mode: every node's id=host:port internal address (Raft and replication), e.g. 1=127.0.0.1:7001,2=127.0.0.1:7002,3=127.0.0.1:7003"`
	// InternalRoutes reaches a node's internal address through another.
	InternalRoutes RouteList `split_words:"true" desc:"Cluster mode: reach a node's internal address through another, addr=via pairs (host:port each), comma-separated; for tunnels, NAT, or proxies"`
	// Join starts a node that is not in the cluster's first list: it
	// waits to be added with pystream cluster add-node.
	Join Switch `default:"off" desc:"Cluster mode: start a new node that waits to be added (pystream cluster add-node) instead of bootstrapping: on or off"`
	// ClusterTLSCert, ClusterTLSKey and ClusterTLSCA are the PEM files of
	// this node's certificate, its key and the cluster CA: all three set,
	// the internal port speaks mutual TLS 1.3 only
	// (docs/security.md § The internal port). None: plain TCP, on loopback addresses only unless
	// Insecure. Some but not all are refused. (ClusterTLSCa, not
	// ClusterTLSCA: split_words reads the field name, and would make it
	// PYSTREAM_CLUSTER_TLSCA.)
	ClusterTLSCert string `split_words:"true" desc:"Cluster mode: PEM certificate of this node (URI SAN pystream-node:ID; pystream cluster certs makes them); with PYSTREAM_CLUSTER_TLS_KEY and _CA, the internal port speaks mutual TLS only"`
	ClusterTLSKey  string `split_words:"true" desc:"Cluster mode: PEM private key of PYSTREAM_CLUSTER_TLS_CERT"`
	ClusterTLSCa   string `split_words:"true" desc:"Cluster mode: PEM certificate of the cluster CA, which signed every node's certificate"`
}

// Defaults returns the configuration used when no variable is set.
func Defaults() Config {
	return Config{
		AppName:   "pystream",
		Host:      "127.0.0.1",
		Port:      8000,
		KafkaPort: 9092,

		GroupMinSessionTimeout: GroupSessionTimeout(6 * time.Second),

		LogLevel:  LogLevel(LevelInfo),
		LogFormat: FormatText,
		DataDir:   "./data",
		Brokers:   3,

		MaxRequestBytes:   DefaultMaxRequestBytes,
		MaxRequestRecords: DefaultMaxRequestRecords,
		MaxInflightBytes:  DefaultMaxInflightBytes,
		FetchMaxBytes:     MaxFetchBytes,
		FailoverAfter:     FailoverDelay(DefaultFailoverAfter),
		LeaderRebalance:   true,
		SharedSync:        SyncJournal,

		RetentionMs:            topic.DefaultRetentionMs,
		RetentionBytes:         topic.DefaultRetentionBytes,
		SegmentBytes:           topic.DefaultSegmentBytes,
		SegmentMs:              topic.DefaultSegmentMs,
		RetentionCheckInterval: CheckInterval(5 * time.Minute),
		GroupSessionTimeout:    GroupTimeout(group.DefaultSessionTimeout),
		GroupHeartbeatInterval: GroupTimeout(group.DefaultHeartbeatInterval),
	}
}

// TopicDefaults is the server-wide topic configuration the variables
// give.
func (c Config) TopicDefaults() *topic.Config {
	d := topic.DefaultConfig()
	d.RetentionMs, d.RetentionBytes = int64(c.RetentionMs), int64(c.RetentionBytes)
	d.SegmentBytes, d.SegmentMs = int64(c.SegmentBytes), int64(c.SegmentMs)
	return &d
}

// Addr returns the host:port the server listens on.
func (c Config) Addr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
}

// validate checks the fields envconfig stores without a decoder of ours.
func (c Config) validate() error {
	if !syntax.ValidHost(c.Host) {
		return &ConfigError{Var: EnvPrefix + "_HOST", Value: c.Host, Allowed: "an IP address (127.0.0.1, ::1, 0.0.0.0) or a host name (letters, digits, '-' and '.')"}
	}
	if c.KafkaAdvertisedHost != "" && !syntax.ValidHost(c.KafkaAdvertisedHost) {
		return &ConfigError{Var: EnvPrefix + "_KAFKA_ADVERTISED_HOST", Value: c.KafkaAdvertisedHost, Allowed: "an IP address or a host name (letters, digits, '-' and '.')"}
	}
	if c.KafkaPort > 0 && !c.ClusterMode() && int(c.KafkaPort)+int(c.Brokers)-1 > 65535 {
		return &ConfigError{Var: EnvPrefix + "_KAFKA_PORT", Value: strconv.Itoa(int(c.KafkaPort)),
			Allowed: fmt.Sprintf("at most %d, so that broker %d's port (this + %d) is a port", 65535-int(c.Brokers)+1, int(c.Brokers), int(c.Brokers)-1)}
	}
	if strings.TrimSpace(c.AppName) != c.AppName || !syntax.Printable(c.AppName) {
		return &ConfigError{Var: EnvPrefix + "_APP_NAME", Value: c.AppName, Allowed: "printable text without leading or trailing spaces"}
	}
	if strings.ContainsRune(c.DataDir, 0) {
		return &ConfigError{Var: EnvPrefix + "_DATA_DIR", Value: c.DataDir, Allowed: "a directory path"}
	}
	if c.MaxInflightBytes > 0 && int64(c.MaxRequestBytes) > int64(c.MaxInflightBytes) {
		// A body larger than the in-flight budget could never be admitted:
		// every such request would be told to retry for ever.
		return &ConfigError{Var: EnvPrefix + "_MAX_REQUEST_BYTES", Value: strconv.FormatInt(int64(c.MaxRequestBytes), 10),
			Allowed: fmt.Sprintf("at most PYSTREAM_MAX_INFLIGHT_BYTES (%d)", int64(c.MaxInflightBytes))}
	}
	if c.GroupHeartbeatInterval > 0 && c.GroupSessionTimeout > 0 && c.GroupHeartbeatInterval >= c.GroupSessionTimeout {
		return &ConfigError{Var: EnvPrefix + "_GROUP_HEARTBEAT_INTERVAL", Value: c.GroupHeartbeatInterval.String(),
			Allowed: "shorter than PYSTREAM_GROUP_SESSION_TIMEOUT (" + c.GroupSessionTimeout.String() + "), or a member would time out between two heartbeats"}
	}
	if err := c.validateClusterMode(); err != nil {
		return err
	}
	if err := c.validateClusterTLS(); err != nil {
		return err
	}
	return c.validateTLS()
}

// Variable describes one configuration variable.
type Variable struct {
	// Name is the environment variable, e.g. PYSTREAM_PORT.
	Name string
	// Default is the value used when the variable is unset or empty.
	Default string
	// Description says what the variable does and what it accepts.
	Description string
}

// variables asks envconfig for the name, default and description of every
// field of Config, so the list can never disagree with what Load reads.
var variables = sync.OnceValues(func() ([]Variable, error) {
	const sep = "\x1f"
	var buf bytes.Buffer
	format := "{{range .}}{{usage_key .}}" + sep + "{{usage_default .}}" + sep + "{{usage_description .}}\n{{end}}"
	if err := envconfig.Usagef(EnvPrefix, &Config{}, &buf, format); err != nil {
		return nil, fmt.Errorf("server: list configuration variables: %w", err)
	}
	var vars []Variable
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		parts := strings.Split(line, sep)
		if len(parts) != 3 {
			return nil, fmt.Errorf("server: list configuration variables: unexpected line %q", line)
		}
		vars = append(vars, Variable{Name: parts[0], Default: parts[1], Description: parts[2]})
	}
	return vars, nil
})

// Variables lists every configuration variable in declaration order.
func Variables() []Variable {
	vars, err := variables()
	if err != nil {
		// Config is a fixed struct; Usagef fails only if it is not one.
		// Tests cover it, so this cannot happen in a released binary.
		return nil
	}
	return append([]Variable(nil), vars...)
}

// Usage writes the table of every configuration variable, its default and
// what it accepts.
func Usage(w io.Writer) error {
	vars, err := variables()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Configuration: environment variables, or a .env file in the working directory\n(the environment wins; an empty value counts as unset):\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIABLE\tDEFAULT\tDESCRIPTION")
	for _, v := range vars {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, v.Default, v.Description)
	}
	return tw.Flush()
}
