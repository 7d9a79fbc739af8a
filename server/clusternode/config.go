package clusternode

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clustertls"
	"github.com/pystream/pystream/server/raftmeta"
	"github.com/pystream/pystream/topic"
)

// Config is one broker process of a cluster-mode cluster.
type Config struct {
	// ID is this node's broker id and Raft id, 1 or more.
	ID int
	// Peers maps every voter's id to its internal address (Raft and
	// replication on one port): the cluster at its first start. Later
	// starts recover the membership from the Raft log.
	Peers map[int]string
	// Join starts a node that is not in Peers' first configuration: it
	// waits to be added (pystream cluster add-node) instead of
	// bootstrapping.
	Join bool
	// DataDir holds Raft's directory (raft/) and the broker's replicas
	// (broker-<id>/), as an embedded cluster's broker directory.
	DataDir string
	// HTTPAddr is this node's client address as clients reach it.
	HTTPAddr string
	// KafkaAddr is the address this node's Kafka listener advertises,
	// host:port, registered in the metadata so that every node's Kafka
	// Metadata answer lists it; empty when the node serves no Kafka.
	KafkaAddr string
	// FailoverAfter is how long a broker may send no heartbeat before it
	// is fenced: its leaderships fail over and its replicas leave the
	// active sets. Zero: never (the controller only catches followers up).
	// It also sets the heartbeat interval (HeartbeatInterval), whatever
	// the operator switches automatic healing to (healing.go).
	FailoverAfter time.Duration
	// DefaultFailoverAfter is the failover delay the controller uses when
	// the operator switches automatic healing on (healing.go) while
	// FailoverAfter is zero. Zero: 3 s.
	DefaultFailoverAfter time.Duration
	// Routes reaches a node's internal address through another
	// (advertised address -> address to dial): for a tunnel or a NAT, and
	// for tests that cut the links between nodes with proxies.
	Routes map[string]string
	// Listener is the internal listener; nil listens on Peers[ID].
	Listener net.Listener
	// Dial opens a connection to another node's internal API at an
	// address (after Routes); nil dials TCP. Tests pass an in-memory
	// network's (clustertest).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// TLS, when set, is this node's identity on the internal port: every
	// connection, accepted or dialed, Raft's and the internal API's, is
	// mutual TLS 1.3 with the cluster CA's certificates, and a peer is
	// known by the node id its certificate names (security.go). Nil: plain
	// TCP, which anyone who reaches the port may use.
	TLS *clustertls.Identity
	// RaftTransport carries Raft's messages instead of the internal port
	// (raftmeta.Config.Transport): tests pass an in-memory network's.
	RaftTransport raft.Transport
	// Broker tunes the node's broker as cluster.BrokerOptions tune one in
	// one process: its replica logs' largest payload (zero:
	// log.DefaultMaxPayloadSize), its clock, its file system, its log.
	Broker cluster.BrokerOptions
	// Logger receives the node's logs; nil discards them.
	Logger *slog.Logger
	// Registerer receives the controller's metrics; nil registers none.
	Registerer prometheus.Registerer
	// TopicDefaults is the server-wide topic configuration; a topic's
	// effective configuration is it with the topic's overrides laid over
	// it. Nil means topic.DefaultConfig(); a value outside a key's rule is
	// refused (ErrInvalidConfig). Every node of a cluster should be given
	// the same.
	TopicDefaults *topic.Config
	// LeaderChanged, when set, is called each time the node that leads
	// the metadata group changes as this node sees it: its id, this
	// node's own once it leads (after its controller started), 0 while
	// none is known. It is called from one goroutine, in order, the
	// first time when the node learns of a leader; it must not block.
	// The server moves its consumer groups' coordinators with it.
	LeaderChanged func(leader int)
	// Advanced, if set, is told each time the high watermark this node
	// knows of a partition rises (cluster.Options.Advanced): on the
	// leader when its followers have taken a write, on a follower when
	// its leader says so. It must return at once.
	Advanced func(topic string, partition int, highWatermark uint64)
}

func (c Config) validate() error {
	if c.ID < 1 {
		return fmt.Errorf("clusternode: node id %d: want 1 or more: %w", c.ID, ErrInvalidConfig)
	}
	if _, ok := c.Peers[c.ID]; !ok && c.Listener == nil {
		return fmt.Errorf("clusternode: node %d is not in the cluster list: %w", c.ID, ErrInvalidConfig)
	}
	if c.TLS != nil && c.TLS.ID != c.ID {
		return fmt.Errorf("clusternode: node %d's certificate names node %d: %w", c.ID, c.TLS.ID, ErrInvalidConfig)
	}
	if c.DataDir == "" {
		return fmt.Errorf("clusternode: no data directory: %w", ErrInvalidConfig)
	}
	if c.KafkaAddr != "" {
		if host, port, err := net.SplitHostPort(c.KafkaAddr); err != nil || host == "" || port == "" || port == "0" {
			return fmt.Errorf("clusternode: Kafka address %q: want host:port: %w", c.KafkaAddr, ErrInvalidConfig)
		}
	}
	if c.TopicDefaults != nil {
		if err := c.TopicDefaults.Validate(); err != nil {
			return fmt.Errorf("clusternode: topic defaults: %w: %w", ErrInvalidConfig, err)
		}
	}
	return nil
}

// HeartbeatInterval is how often a broker reports to the controller:
// a tenth of the failover delay, between 50 ms and 500 ms, so that a
// broker is declared silent at most one interval after the delay.
func HeartbeatInterval(failoverAfter time.Duration) time.Duration {
	return min(max(failoverAfter/10, 50*time.Millisecond), 500*time.Millisecond)
}

// HeartbeatWindow is how long a broker may stay silent and still count as
// up: three heartbeat intervals. It also bounds how long a partition's
// status waits for its leader's own answer (cluster.MemberConfig.StatusWait):
// a leader silent for longer counts down and is not asked.
func HeartbeatWindow(failoverAfter time.Duration) time.Duration {
	return 3 * HeartbeatInterval(failoverAfter)
}

// The rest of this family derives every wait on another node from the
// failover delay (docs/phase-7-processes.md § Faults and deadlines): a
// node that stops answering — killed, paused, cut off with its
// connections closed or with its bytes held — costs its peers and their
// clients no more than the delay plus a margin.

// manualFailoverAfter stands in for the failover delay when there is
// none (PYSTREAM_FAILOVER_AFTER=0, the manual mode): the deadlines are
// those of the 3 s default, so that nothing waits on a silent peer for
// longer than it would with automatic failover.
const manualFailoverAfter = 3 * time.Second

// CallDeadline bounds one request a node sends another and waits on: a
// client's produce or read forwarded to the partition's leader, a
// leader's push of records to a follower, a proposal forwarded to the
// metadata group's leader. It is the failover delay and half again (at
// least 750 ms, at most requestTimeout): long enough for a leader to
// acknowledge a write once the controller has taken a silent follower out
// of the active set (at the failover delay), short enough that the client
// of a silent leader hears within the delay and a margin that the call
// failed, retriably, instead of waiting for it.
func CallDeadline(failoverAfter time.Duration) time.Duration {
	if failoverAfter <= 0 {
		failoverAfter = manualFailoverAfter
	}
	return min(max(failoverAfter+failoverAfter/2, 750*time.Millisecond), requestTimeout)
}

// RaftHeartbeatTimeout is the metadata group's heartbeat and election
// timeout: a quarter of the failover delay, between 250 ms and
// raftmeta.DefaultHeartbeatTimeout. Raft re-arms a random timer of one to
// two timeouts and checks the leader's silence only when it fires, so a
// follower stands for election one to three timeouts after it last heard
// from the leader; when the other follower has not noticed yet and
// refuses its vote, the next round comes one to two election timeouts
// later. Five timeouts at worst, a quarter of the delay each: a
// controller that stops answering is replaced within the failover delay
// and a quarter, and the new controller then fails its partitions over as
// soon as their leader has been silent for the delay, as it would a
// partition leader's. A quarter of the delay measured no election with
// nothing failed in a 30-minute chaos run on two busy cores; much shorter
// would (server/raftmeta/doc.go § Timing).
func RaftHeartbeatTimeout(failoverAfter time.Duration) time.Duration {
	if failoverAfter <= 0 {
		return raftmeta.DefaultHeartbeatTimeout
	}
	return min(max(failoverAfter/4, 250*time.Millisecond), raftmeta.DefaultHeartbeatTimeout)
}

// StopDeadline bounds a node's Close: its loops, its Raft voter (whose
// calls to a held peer end within a call deadline) and its brokers'
// writes in flight. A Close that takes longer is abandoned by the server,
// which exits anyway (the records it acknowledged are on disk).
func StopDeadline(failoverAfter time.Duration) time.Duration {
	return 2 * CallDeadline(failoverAfter)
}
