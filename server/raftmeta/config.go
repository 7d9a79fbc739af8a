package raftmeta

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"time"

	"github.com/hashicorp/raft"
)

// The timing defaults, for the LAN or loopback links between the nodes of
// one PyStream cluster. doc.go explains the choice.
const (
	// DefaultHeartbeatTimeout: a follower that hears nothing from the
	// leader for between this and twice this starts an election.
	DefaultHeartbeatTimeout = time.Second
	// DefaultElectionTimeout: a candidate that wins no vote within between
	// this and twice this starts the next election.
	DefaultElectionTimeout = time.Second
	// DefaultLeaderLeaseTimeout: a leader that hears from no majority for
	// this long steps down. It must not exceed the heartbeat timeout.
	DefaultLeaderLeaseTimeout = 500 * time.Millisecond
	// DefaultCommitTimeout: the longest a follower waits, with no new
	// command, to learn that earlier commands committed.
	DefaultCommitTimeout = 50 * time.Millisecond
	// DefaultTransportTimeout: the I/O deadline of one RPC of the network
	// transport.
	DefaultTransportTimeout = 10 * time.Second
	// DefaultSnapshotThreshold: a snapshot is taken once this many entries
	// were appended since the last one (checked every SnapshotInterval).
	DefaultSnapshotThreshold = 8192
	// DefaultSnapshotInterval: how often the threshold is checked.
	DefaultSnapshotInterval = 2 * time.Minute
	// DefaultTrailingLogs: entries kept in the log after a snapshot, so a
	// follower that fell a little behind catches up from the log instead
	// of a whole snapshot.
	DefaultTrailingLogs = 10240
)

// Config describes one node. Open fills every zero timing field with its
// default; ID, Dir, FSM, (to bootstrap) Peers, and either Listener or
// Transport are required.
type Config struct {
	// ID is this node's id, 1 or more; its Raft id is the decimal string.
	ID int
	// Dir is Raft's own directory: raft.db (log and stable store) and
	// snapshots/. It is created when missing.
	Dir string
	// Peers maps every voter's id to its internal address. It is the
	// bootstrap configuration, used only at the first start of a fresh Dir
	// and identical on every node; on a later start it is ignored. It must
	// hold ID unless Join is set.
	Peers map[int]string
	// Join marks a node that must not bootstrap: it starts with no
	// configuration and waits for a leader to add it (AddVoter). Peers is
	// ignored.
	Join bool
	// Listener gives the connections routed to Raft (for example a
	// netmux KindRaft listener). The node owns it and closes it on Close.
	// Required unless Transport is set; it may not be set with Transport.
	Listener net.Listener
	// Dial dials a peer's Raft side, for example netmux.Dial with
	// KindRaft. Nil means a plain TCP dial, matching a Listener that is a
	// plain TCP listener. It goes with Listener and may not be set with
	// Transport.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Transport, when set, carries Raft's messages instead of a network
	// transport over Listener and Dial: in tests, an in-memory transport
	// of rafttest.Network, so a cluster runs in one process. Its LocalAddr
	// is this node's address. The node owns it from Open on and closes it
	// on Close (hashicorp's Shutdown closes a transport that has Close).
	// Nil means the network transport over Listener.
	Transport raft.Transport
	// Advertise is this node's internal address as the peers know it.
	// Empty means Peers[ID], or with Transport the transport's LocalAddr
	// (a different Advertise is then refused).
	Advertise string
	// FSM is the replicated state machine.
	FSM StateMachine
	// Logger receives the node's logs; nil discards them. Raft's own Info
	// chatter is logged at Debug; leadership changes are logged at Info.
	Logger *slog.Logger

	// HeartbeatTimeout: zero means DefaultHeartbeatTimeout.
	HeartbeatTimeout time.Duration
	// ElectionTimeout: zero means DefaultElectionTimeout.
	ElectionTimeout time.Duration
	// LeaderLeaseTimeout: zero means DefaultLeaderLeaseTimeout.
	LeaderLeaseTimeout time.Duration
	// CommitTimeout: zero means DefaultCommitTimeout.
	CommitTimeout time.Duration
	// TransportTimeout is the I/O deadline of one RPC of the network
	// transport (scaled up for a large snapshot): how long a peer that
	// holds the connection without answering (paused, or behind a network
	// that holds the bytes) can hold a replication goroutine of the
	// leader, and so a Close. Zero means DefaultTransportTimeout.
	TransportTimeout time.Duration
	// SnapshotThreshold: zero means DefaultSnapshotThreshold.
	SnapshotThreshold uint64
	// SnapshotInterval: zero means DefaultSnapshotInterval.
	SnapshotInterval time.Duration
	// TrailingLogs: zero means DefaultTrailingLogs.
	TrailingLogs uint64
}

// withDefaults returns c with every zero timing field set to its default.
func (c Config) withDefaults() Config {
	or := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	or(&c.HeartbeatTimeout, DefaultHeartbeatTimeout)
	or(&c.ElectionTimeout, DefaultElectionTimeout)
	or(&c.LeaderLeaseTimeout, DefaultLeaderLeaseTimeout)
	or(&c.CommitTimeout, DefaultCommitTimeout)
	or(&c.TransportTimeout, DefaultTransportTimeout)
	or(&c.SnapshotInterval, DefaultSnapshotInterval)
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = DefaultTrailingLogs
	}
	switch {
	case c.Advertise != "":
	case c.Transport != nil:
		c.Advertise = string(c.Transport.LocalAddr())
	case !c.Join:
		c.Advertise = c.Peers[c.ID]
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// validate checks a Config after withDefaults. Peers is checked only when
// bootstrapping, by validatePeers.
func (c Config) validate() error {
	switch {
	case c.ID < 1:
		return &ConfigError{Field: "ID", Reason: fmt.Sprintf("%d is not 1 or more", c.ID)}
	case c.Dir == "":
		return &ConfigError{Field: "Dir", Reason: "empty"}
	case c.Transport != nil && c.Listener != nil:
		return &ConfigError{Field: "Transport", Reason: "set with Listener; give one of them"}
	case c.Transport != nil && c.Dial != nil:
		return &ConfigError{Field: "Transport", Reason: "set with Dial, which only a Listener uses"}
	case c.Transport != nil && c.Advertise != string(c.Transport.LocalAddr()):
		return &ConfigError{Field: "Advertise", Reason: fmt.Sprintf("%q differs from the transport's address %q", c.Advertise, c.Transport.LocalAddr())}
	case c.Transport == nil && c.Listener == nil:
		return &ConfigError{Field: "Listener", Reason: "nil, and no Transport is set"}
	case c.FSM == nil:
		return &ConfigError{Field: "FSM", Reason: "nil"}
	case c.Advertise == "":
		return &ConfigError{Field: "Advertise", Reason: "empty, and Peers has no address for this node"}
	}
	return nil
}

// bootstrap returns the configuration every node of a new cluster starts
// with: Peers, ordered by id, all voters.
func (c Config) bootstrap() (raft.Configuration, error) {
	addr, ok := c.Peers[c.ID]
	if !ok {
		return raft.Configuration{}, &ConfigError{Field: "Peers", Reason: fmt.Sprintf("no entry for this node (%d); set Join to start without bootstrapping", c.ID)}
	}
	if addr != c.Advertise {
		return raft.Configuration{}, &ConfigError{Field: "Advertise", Reason: fmt.Sprintf("%q differs from this node's address in Peers (%q)", c.Advertise, addr)}
	}
	ids := make([]int, 0, len(c.Peers))
	for id, addr := range c.Peers {
		if id < 1 {
			return raft.Configuration{}, &ConfigError{Field: "Peers", Reason: fmt.Sprintf("id %d is not 1 or more", id)}
		}
		if addr == "" {
			return raft.Configuration{}, &ConfigError{Field: "Peers", Reason: fmt.Sprintf("node %d has no address", id)}
		}
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var conf raft.Configuration
	seen := make(map[string]int, len(ids))
	for _, id := range ids {
		addr := c.Peers[id]
		if other, dup := seen[addr]; dup {
			return raft.Configuration{}, &ConfigError{Field: "Peers", Reason: fmt.Sprintf("nodes %d and %d share the address %s", other, id, addr)}
		}
		seen[addr] = id
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: serverID(id), Address: raft.ServerAddress(addr)})
	}
	return conf, nil
}

// raftConfig is the hashicorp configuration of the node.
func (c Config) raftConfig(logger *hclogAdapter) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = serverID(c.ID)
	rc.HeartbeatTimeout = c.HeartbeatTimeout
	rc.ElectionTimeout = c.ElectionTimeout
	rc.LeaderLeaseTimeout = c.LeaderLeaseTimeout
	rc.CommitTimeout = c.CommitTimeout
	rc.SnapshotThreshold = c.SnapshotThreshold
	rc.SnapshotInterval = c.SnapshotInterval
	rc.TrailingLogs = c.TrailingLogs
	// A leader that removes itself is shut down by RemoveVoter rather
	// than by hashicorp, whose own Shutdown nobody could wait for: Close
	// would then close the bolt store under Raft's last goroutines and
	// leave the transport open (Node.stopRaft).
	rc.ShutdownOnRemove = false
	rc.Logger = logger
	return rc
}
