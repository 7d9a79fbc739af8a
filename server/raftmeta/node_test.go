package raftmeta

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/raftmeta/rafttest"
)

// TestRaftmetaThreeNodesReplicate: three nodes bootstrapped with the same
// Peers elect exactly one leader; commands applied on it reach all three
// state machines in the same order (Raft §5.3, log matching); a follower
// refuses Apply with a *NotLeaderError naming the leader.
func TestRaftmetaThreeNodesReplicate(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	leader := c.waitLeader(5 * time.Second)

	select {
	case became := <-leader.node.Leadership():
		require.True(t, became)
	case <-time.After(5 * time.Second):
		t.Fatal("the leader was not told of its leadership")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := leader.node.Apply(ctx, []byte("first"))
	require.NoError(t, err)
	require.Equal(t, "first#1", string(res), "the result is the leader's state machine's")
	want := append([]string{"first"}, applyN(t, leader.node, "cmd", 20)...)
	c.waitConverged(want)

	for _, n := range c.running() {
		if n == leader {
			continue
		}
		require.False(t, n.node.IsLeader())
		_, err := n.node.Apply(ctx, []byte("from a follower"))
		require.ErrorIs(t, err, ErrNotLeader)
		var nle *NotLeaderError
		require.ErrorAs(t, err, &nle)
		require.Equal(t, leader.id, nle.LeaderID)
		require.Equal(t, leader.addr, nle.LeaderAddr)
		require.ErrorIs(t, n.node.Barrier(ctx), ErrNotLeader)
		require.GreaterOrEqual(t, n.node.AppliedIndex(), uint64(len(want)))
	}
	require.NoError(t, leader.node.Barrier(ctx))

	servers, err := leader.node.Servers()
	require.NoError(t, err)
	require.Len(t, servers, 3)
	for i, s := range servers {
		require.Equal(t, i+1, s.ID)
		require.Equal(t, c.nodes[s.ID].addr, s.Addr)
		require.True(t, s.Voter)
		require.Equal(t, s.ID == leader.id, s.Leader)
	}
}

// TestRaftmetaAddRemoveVoter: a node started with Join is added as a
// fourth voter and receives the state, here by a snapshot because the
// leader compacted its log; removed again, the configuration holds three.
func TestRaftmetaAddRemoveVoter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, func(cfg *Config) { cfg.TrailingLogs = 1 })
		leader := c.waitLeader(5 * time.Second)
		want := applyN(t, leader.node, "old", 10)
		require.NoError(t, leader.node.raft.Snapshot().Error())

		fourth := &testNode{id: 4, addr: rafttest.Addr(4), dir: filepath.Join(t.TempDir(), "4")}
		c.nodes[4] = fourth
		c.start(fourth, nil, nil, true)
		require.False(t, fourth.node.IsLeader())

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, leader.node.AddVoter(ctx, 4, fourth.addr))
		want = append(want, applyN(t, leader.node, "new", 3)...)
		c.waitConverged(want)
		require.Equal(t, 1, fourth.fsm.restoreCount(), "the fourth node got the leader's snapshot")
		servers, err := leader.node.Servers()
		require.NoError(t, err)
		require.Len(t, servers, 4)
		require.Equal(t, Server{ID: 4, Addr: fourth.addr, Voter: true}, servers[3])

		require.NoError(t, leader.node.RemoveVoter(ctx, 4))
		servers, err = leader.node.Servers()
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 3}, ids(servers))
		c.stop(fourth) // a removed follower is not told; its operator stops it
		delete(c.nodes, 4)

		want = append(want, applyN(t, leader.node, "after", 2)...)
		c.waitConverged(want)
	})
}

// TestRaftmetaRefusal: a command the state machine refuses comes back to
// the proposer as a *RefusedError matching the state machine's own error,
// with its message unchanged, and changes no state.
func TestRaftmetaRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 1, nil)
		n := c.nodes[1].node
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		before := applyN(t, n, "ok", 1)

		_, err := n.Apply(ctx, []byte("refuse me"))
		require.ErrorIs(t, err, errTestRefused)
		var re *RefusedError
		require.ErrorAs(t, err, &re)
		require.Positive(t, re.Index)
		require.Equal(t, `command "refuse me": listfsm: refused`, err.Error())
		require.Equal(t, before, c.nodes[1].fsm.list())
		require.False(t, errors.Is(err, ErrNotLeader))
	})
}

// TestRaftmetaClose: Close is idempotent; afterwards the node's operations
// fail with ErrClosed and it knows no leader.
func TestRaftmetaClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 1, nil)
		tn := c.nodes[1]
		n := tn.node
		c.stop(tn)
		require.NoError(t, n.Close())
		ctx := context.Background()
		_, err := n.Apply(ctx, []byte("x"))
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, n.Barrier(ctx), ErrClosed)
		require.ErrorIs(t, n.AddVoter(ctx, 2, "127.0.0.1:1"), ErrClosed)
		require.ErrorIs(t, n.AddVoter(ctx, 0, "127.0.0.1:1"), ErrInvalidArgument)
		require.ErrorIs(t, n.AddVoter(ctx, 2, ""), ErrInvalidArgument)
		require.ErrorIs(t, n.RemoveVoter(ctx, -1), ErrInvalidArgument)
		require.False(t, n.IsLeader())
		id, addr := n.Leader()
		require.Zero(t, id)
		require.Empty(t, addr)
	})
}

// TestRaftmetaApplyContext: an Apply whose context has ended fails with
// the context's error without proposing.
func TestRaftmetaApplyContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 1, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.nodes[1].node.Apply(ctx, []byte("x"))
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, c.nodes[1].fsm.list())
	})
}

// TestRaftmetaDirInUse: a second node on a directory in use fails within
// the bolt lock timeout instead of hanging, and closes its listener.
func TestRaftmetaDirInUse(t *testing.T) {
	c := newTestCluster(t, 1, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, err = Open(Config{ID: 1, Dir: c.nodes[1].dir, Join: true, Listener: l, Advertise: l.Addr().String(), FSM: &listFSM{}})
	require.Error(t, err)
	_, err = l.Accept()
	require.ErrorIs(t, err, net.ErrClosed, "Open closes the listener it fails with")
}

// TestRaftmetaConfigErrors: a Config that makes no sense is a
// *ConfigError naming the field, never a panic.
func TestRaftmetaConfigErrors(t *testing.T) {
	valid := func(l net.Listener) Config {
		return Config{ID: 1, Dir: t.TempDir(), Peers: map[int]string{1: "127.0.0.1:7001", 2: "127.0.0.1:7002"}, Listener: l, FSM: &listFSM{}}
	}
	cases := []struct {
		name  string
		field string
		edit  func(*Config)
	}{
		{"id zero", "ID", func(c *Config) { c.ID = 0 }},
		{"id negative", "ID", func(c *Config) { c.ID = -3 }},
		{"no dir", "Dir", func(c *Config) { c.Dir = "" }},
		{"no listener", "Listener", func(c *Config) { c.Listener = nil }},
		{"no fsm", "FSM", func(c *Config) { c.FSM = nil }},
		{"self not in peers", "Advertise", func(c *Config) { c.ID = 3 }},
		{"self not in peers, advertised", "Peers", func(c *Config) { c.ID = 3; c.Advertise = "127.0.0.1:7003" }},
		{"advertise differs", "Advertise", func(c *Config) { c.Advertise = "127.0.0.1:9999" }},
		{"peer id zero", "Peers", func(c *Config) { c.Peers[0] = "127.0.0.1:7000" }},
		{"peer without address", "Peers", func(c *Config) { c.Peers[2] = "" }},
		{"shared address", "Peers", func(c *Config) { c.Peers[2] = c.Peers[1] }},
		{"join without advertise", "Advertise", func(c *Config) { c.Join = true }},
		{"transport and listener", "Transport", func(c *Config) { c.Transport = inmemTransport("127.0.0.1:7001") }},
		{"transport and dial", "Transport", func(c *Config) {
			c.Listener, c.Transport = nil, inmemTransport("127.0.0.1:7001")
			c.Dial = func(context.Context, string) (net.Conn, error) { return nil, errors.New("unused") }
		}},
		{"advertise differs from transport", "Advertise", func(c *Config) {
			c.Listener, c.Transport, c.Advertise = nil, inmemTransport("127.0.0.1:7001"), "127.0.0.1:7002"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer l.Close()
			cfg := valid(l)
			tc.edit(&cfg)
			_, err = Open(cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.field, ce.Field, "%v", err)
		})
	}
}

// TestRaftmetaNodeID: Raft ids are decimal node ids; anything else parses
// to 0 ("unknown") instead of failing.
func TestRaftmetaNodeID(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "42": 42, "0": 0, "-1": 0, "01": 0, "x": 0, "": 0, "1.5": 0} {
		require.Equal(t, want, nodeID(serverIDString(in)), "%q", in)
	}
	for _, id := range []int{1, 7, 1000} {
		require.Equal(t, id, nodeID(serverID(id)))
	}
}

// inmemTransport is a hashicorp in-memory transport at addr, connected to
// nothing.
func inmemTransport(addr string) raft.Transport {
	_, t := raft.NewInmemTransport(raft.ServerAddress(addr))
	return t
}

func ids(servers []Server) []int {
	var out []int
	for _, s := range servers {
		out = append(out, s.ID)
	}
	slices.Sort(out)
	return out
}
