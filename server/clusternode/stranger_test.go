package clusternode_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/clustertls"
	"github.com/pystream/pystream/server/netmux"
	"github.com/pystream/pystream/server/replication"
)

// The takeovers of the internal port
// (docs/security.md § The internal port), tried against the real internal listeners of a running
// three-node cluster with mutual TLS, on loopback TCP, the way an
// attacker would: HTTP/2 requests to the replication API's paths, and a
// raw Raft connection. Every stranger is refused at the handshake and
// nothing changes.

// tcpCluster is three clusternode.Nodes on loopback TCP with mutual TLS.
type tcpCluster struct {
	t     *testing.T
	ca    *clustertls.CA
	addrs map[int]string
	nodes map[int]*clusternode.Node
}

func startTCPCluster(t *testing.T) *tcpCluster {
	t.Helper()
	ca, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	c := &tcpCluster{t: t, ca: ca, addrs: map[int]string{}, nodes: map[int]*clusternode.Node{}}
	lns := map[int]net.Listener{}
	for id := 1; id <= 3; id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns[id], c.addrs[id] = ln, ln.Addr().String()
	}
	for id := 1; id <= 3; id++ {
		ident, err := ca.Identity(id, time.Now())
		require.NoError(t, err)
		n, err := clusternode.Open(clusternode.Config{ID: id, Peers: c.addrs, DataDir: t.TempDir(), Listener: lns[id], TLS: ident,
			HTTPAddr: fmt.Sprintf("127.0.0.1:%d", 18000+id), FailoverAfter: time.Minute})
		require.NoError(t, err)
		c.nodes[id] = n
		t.Cleanup(func() { _ = n.Close() })
	}
	c.await("every node ready, one controller", func() (bool, string) {
		ctl := c.nodes[1].Controller()
		for id, n := range c.nodes {
			if ok, why := n.Ready(); !ok {
				return false, fmt.Sprintf("node %d: %v", id, why)
			}
			if n.Controller() != ctl || ctl == 0 {
				return false, "no agreed controller"
			}
		}
		return true, ""
	})
	return c
}

// await waits for cond, looking again at every metadata change and every
// 10 ms, for up to a minute.
func (c *tcpCluster) await(what string, cond func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: %s", what, why)
		}
		var changed []<-chan struct{}
		for _, n := range c.nodes {
			changed = append(changed, n.Cluster().MetadataChanged())
		}
		clustertest.AwaitAny(changed, 10*time.Millisecond)
	}
}

// stranger dials a node's internal port: plain, or TLS with the given
// certificates (none: no client certificate), trusting any server.
type stranger struct {
	name  string
	plain bool
	certs []tls.Certificate
}

func (s stranger) dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || s.plain {
		return conn, err
	}
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, Certificates: s.certs, MinVersion: tls.VersionTLS13}) //nolint:gosec // an attacker trusts any server
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return struct{ net.Conn }{tc}, nil
}

// http2 is the stranger's h2c client of the internal API.
func (s stranger) http2() *http.Client {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &protocols, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return s.dial(ctx, addr) }}}
}

func (c *tcpCluster) strangers() []stranger {
	other, err := clustertls.NewCA(time.Now())
	require.NoError(c.t, err)
	cert := func(ca *clustertls.CA, id int) tls.Certificate {
		cp, kp, err := ca.Issue(id, time.Now())
		require.NoError(c.t, err)
		pair, err := tls.X509KeyPair(cp, kp)
		require.NoError(c.t, err)
		return pair
	}
	return []stranger{
		{name: "plain", plain: true},
		{name: "no certificate"},
		{name: "node 1 from another CA", certs: []tls.Certificate{cert(other, 1)}},
		{name: "node 9, not a member", certs: []tls.Certificate{cert(c.ca, 9)}},
	}
}

// call sends one request of the internal API and returns the status, or
// the transport error.
func call(ctx context.Context, hc *http.Client, method, addr, path string, q url.Values, body []byte) (int, error) {
	u := url.URL{Scheme: "http", Host: addr, Path: path, RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func command(t *testing.T, c cluster.MetaCommand) []byte {
	t.Helper()
	c.Time = time.Now().UTC()
	b, err := cluster.EncodeMetaCommand(c)
	require.NoError(t, err)
	return b
}

func TestInternalPortRefusesStrangers(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster on TCP")
	}
	c := startTCPCluster(t)
	const name = "orders"
	ctl := c.nodes[1].Controller()
	require.NoError(t, c.nodes[ctl].Cluster().CreateTopic(name, 1, 3))
	_, err := cluster.NewProducer(c.nodes[ctl].Cluster(), name).SendBatchTo(0, msgs("one", "two"))
	require.NoError(t, err)
	require.NoError(t, c.nodes[ctl].Cluster().CommitOffset("billing", name, 0, 2))
	st, err := c.nodes[ctl].Cluster().Status(name, 0)
	require.NoError(t, err)
	leader := st.Leader
	follower := slices.DeleteFunc(slices.Clone(st.Assigned), func(id int) bool { return id == leader })[0]
	victim := slices.DeleteFunc([]int{1, 2, 3}, func(id int) bool { return id == ctl })[0]

	// What must not change, read through node 1.
	type snapshot struct {
		records []log.Record
		logEnds map[int]uint64
		offset  uint64
		topics  int
		healing bool
		nodes   []cluster.NodeInfo
		voters  []clusternode.NodeView
		terms   map[int]uint64
		ctl     int
	}
	take := func() snapshot {
		// A loaded machine may call a Raft election meanwhile: read once
		// a controller is known again.
		c.await("a known controller", func() (bool, string) { return c.nodes[1].Controller() != 0, "none" })
		var s snapshot
		var err error
		s.records, err = c.nodes[1].Cluster().ReadCommitted(name, 0, 0, 100)
		require.NoError(t, err)
		st, err := c.nodes[1].Cluster().Status(name, 0)
		require.NoError(t, err)
		s.logEnds = map[int]uint64{}
		for _, r := range st.Replicas {
			if r.LogEnd != nil {
				s.logEnds[r.BrokerID] = *r.LogEnd
			}
		}
		s.offset, _, err = c.nodes[1].Cluster().LoadOffset("billing", name, 0)
		require.NoError(t, err)
		s.topics = len(c.nodes[1].Cluster().Topics())
		s.healing, _ = c.nodes[1].AutomaticHealing()
		s.nodes = c.nodes[1].Nodes()
		_, s.voters, err = c.nodes[1].ClusterNodes()
		require.NoError(t, err)
		s.terms = map[int]uint64{}
		for id, n := range c.nodes {
			s.terms[id] = clusternode.RaftTerm(n)
		}
		s.ctl = c.nodes[1].Controller()
		return s
	}
	var before snapshot
	// Every replica holds both records: one that was not active when they
	// were written is caught up by the controller, and that change must
	// be over before the snapshot is taken.
	c.await("node 1 knows the offset and every replica's log end", func() (bool, string) {
		before = take()
		caughtUp := len(before.logEnds) == 3
		for _, end := range before.logEnds {
			caughtUp = caughtUp && end == 2
		}
		return before.offset == 2 && caughtUp && before.ctl == ctl, fmt.Sprintf("%+v", before)
	})
	require.True(t, before.healing)
	frames := log.AppendFrame(nil, log.Record{Offset: st.HighWatermark, Timestamp: time.Now().UnixNano(), Payload: []byte("forged")})
	off := false

	takeovers := []struct {
		name string
		try  func(ctx context.Context, s stranger) error
	}{
		{"read a replica", func(ctx context.Context, s stranger) error {
			_, err := call(ctx, s.http2(), "GET", c.addrs[follower], replication.PathRecords,
				url.Values{"topic": {name}, "partition": {"0"}, "from": {"0"}, "max_bytes": {"1048576"}}, nil)
			return err
		}},
		{"write through the leader", func(ctx context.Context, s stranger) error {
			_, err := call(ctx, s.http2(), "POST", c.addrs[leader], replication.PathProduce, url.Values{"topic": {name}, "partition": {"0"}},
				log.AppendFrame(nil, log.Record{Payload: []byte("forged")}))
			return err
		}},
		{"a record on one follower", func(ctx context.Context, s stranger) error {
			_, err := call(ctx, s.http2(), "POST", c.addrs[follower], replication.PathReplicate, url.Values{"topic": {name}, "partition": {"0"},
				"epoch": {fmt.Sprint(st.LeaderEpoch)}, "leader": {fmt.Sprint(leader)}, "hw": {fmt.Sprint(st.HighWatermark)}, "log_start": {"0"}}, frames)
			return err
		}},
		{"reset a consumer's offset", func(ctx context.Context, s stranger) error {
			_, err := call(ctx, s.http2(), "POST", c.addrs[ctl], replication.PathPropose, nil,
				command(t, cluster.MetaCommand{Op: cluster.OpResetOffset, Consumer: "billing", Topic: name, Partition: 0, Offset: 0}))
			return err
		}},
		{"create a topic", func(ctx context.Context, s stranger) error {
			_, err := call(ctx, s.http2(), "POST", c.addrs[ctl], replication.PathPropose, nil,
				command(t, cluster.MetaCommand{Op: cluster.OpCreateTopic, Topic: "evil", Partitions: 1, ReplicationFactor: 1}))
			return err
		}},
		{"switch healing off", func(ctx context.Context, s stranger) error {
			_, err := call(ctx, s.http2(), "POST", c.addrs[ctl], replication.PathPropose, nil,
				command(t, cluster.MetaCommand{Op: cluster.OpSetHealing, Automatic: &off}))
			return err
		}},
		{"re-register a broker's Kafka address", func(ctx context.Context, s stranger) error {
			_, err := call(ctx, s.http2(), "POST", c.addrs[ctl], replication.PathPropose, nil,
				command(t, cluster.MetaCommand{Op: cluster.OpRegisterNode, Node: &cluster.NodeInfo{ID: victim, Addr: c.addrs[victim], KafkaAddr: "attacker.example:9092"}}))
			return err
		}},
		{"add itself as a voter", func(ctx context.Context, s stranger) error {
			b, _ := json.Marshal(replication.MembershipRequest{Op: replication.MembershipAdd, ID: 9, Addr: "127.0.0.1:1"})
			_, err := call(ctx, s.http2(), "POST", c.addrs[ctl], replication.PathMembership, nil, b)
			return err
		}},
		{"AppendEntries at term 1000, adding a voter", func(ctx context.Context, s stranger) error {
			return rawAppendEntries(t, s, c.addrs[follower])
		}},
	}
	for _, s := range c.strangers() {
		for _, tk := range takeovers {
			t.Run(s.name+"/"+tk.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				require.Error(t, tk.try(ctx, s), "the stranger's request must not be answered")
				require.Equal(t, before, take(), "nothing changed")
			})
		}
	}
}

// rawAppendEntries sends, as hashicorp/raft's own network transport
// would, an AppendEntries at term 1000 whose entry is a configuration
// with an extra voter, to the Raft side of the internal port at addr.
func rawAppendEntries(t *testing.T, s stranger, addr string) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	layer := &strangerLayer{Listener: ln, s: s}
	tr := raft.NewNetworkTransport(layer, 1, 5*time.Second, io.Discard)
	defer tr.Close()
	conf := raft.EncodeConfiguration(raft.Configuration{Servers: []raft.Server{
		{Suffrage: raft.Voter, ID: "9", Address: raft.ServerAddress(ln.Addr().String())}}})
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("9"), Addr: []byte(ln.Addr().String())}, Term: 1000,
		PrevLogEntry: 0, PrevLogTerm: 0, LeaderCommitIndex: 1,
		Entries: []*raft.Log{{Index: 1, Term: 1000, Type: raft.LogConfiguration, Data: conf}}}
	return tr.AppendEntries("1", raft.ServerAddress(addr), req, &raft.AppendEntriesResponse{})
}

// strangerLayer is a raft.StreamLayer that dials as a stranger, then
// writes Raft's kind byte.
type strangerLayer struct {
	net.Listener
	s stranger
}

func (l *strangerLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := l.s.dial(ctx, string(addr))
	if err != nil {
		return nil, err
	}
	return netmux.WriteKind(ctx, conn, string(addr), netmux.KindRaft)
}

// A member that presents its own certificate but acts for another node —
// replicates as the partition's leader, heartbeats or registers as
// another broker — is answered 403 (replication.CodeForbidden), and
// nothing changes.
func TestInternalPortRefusesImpersonation(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster on TCP")
	}
	c := startTCPCluster(t)
	const name = "orders"
	ctl := c.nodes[1].Controller()
	require.NoError(t, c.nodes[ctl].Cluster().CreateTopic(name, 1, 3))
	st, err := c.nodes[ctl].Cluster().Status(name, 0)
	require.NoError(t, err)
	followers := slices.DeleteFunc(slices.Clone(st.Assigned), func(id int) bool { return id == st.Leader })
	impostor, target := followers[0], followers[1]
	cp, kp, err := c.ca.Issue(impostor, time.Now())
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(cp, kp)
	require.NoError(t, err)
	hc := stranger{name: "member", certs: []tls.Certificate{pair}}.http2()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodesBefore := c.nodes[ctl].Nodes()

	status, err := call(ctx, hc, "POST", c.addrs[target], replication.PathReplicate, url.Values{"topic": {name}, "partition": {"0"},
		"epoch": {fmt.Sprint(st.LeaderEpoch)}, "leader": {fmt.Sprint(st.Leader)}, "hw": {"0"}, "log_start": {"0"}},
		log.AppendFrame(nil, log.Record{Offset: 0, Timestamp: 1, Payload: []byte("forged")}))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, status, "node %d replicating as leader %d", impostor, st.Leader)

	hb, _ := json.Marshal(replication.Heartbeat{Node: target})
	status, err = call(ctx, hc, "POST", c.addrs[ctl], replication.PathHeartbeat, nil, hb)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, status, "node %d heartbeating as node %d", impostor, target)

	status, err = call(ctx, hc, "POST", c.addrs[ctl], replication.PathPropose, nil,
		command(t, cluster.MetaCommand{Op: cluster.OpRegisterNode, Node: &cluster.NodeInfo{ID: target, Addr: c.addrs[target], KafkaAddr: "attacker.example:9092"}}))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, status, "node %d registering node %d", impostor, target)
	require.Equal(t, nodesBefore, c.nodes[ctl].Nodes())

	// Registering itself at another node's internal address is refused by
	// the state machine (cluster.ErrAddrTaken): dials for that address
	// would otherwise want the impostor's id.
	status, err = call(ctx, hc, "POST", c.addrs[ctl], replication.PathPropose, nil,
		command(t, cluster.MetaCommand{Op: cluster.OpRegisterNode, Node: &cluster.NodeInfo{ID: impostor, Addr: c.addrs[target]}}))
	require.NoError(t, err)
	require.NotEqual(t, http.StatusOK, status, "node %d registering at node %d's address", impostor, target)
	require.Equal(t, nodesBefore, c.nodes[ctl].Nodes())

	// Its own heartbeat is answered.
	hb, _ = json.Marshal(replication.Heartbeat{Node: impostor})
	status, err = call(ctx, hc, "POST", c.addrs[ctl], replication.PathHeartbeat, nil, hb)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	_, err = c.nodes[target].Cluster().ReadCommitted(name, 0, 0, 10)
	require.NoError(t, err)
}
