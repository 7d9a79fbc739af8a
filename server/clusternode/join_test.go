package clusternode_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/clustertls"
	"github.com/pystream/pystream/server/raftmeta/rafttest"
)

// TestMTLSJoinWithOwnEntryOnly: a node started with Join and mutual TLS,
// whose Peers (PYSTREAM_CLUSTER) hold only its own entry, is added by
// the leader — the add-node probe and Raft's AppendEntries pass its
// handshake, since while it knows no configuration it lets in any node
// the cluster CA issued — and registers. Once it has the configuration,
// a node of the same CA that is no member is refused again, as it is on
// the leader all along (docs/security.md § Joining with certificates).
func TestMTLSJoinWithOwnEntryOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ca, err := clustertls.NewCA(time.Now())
		require.NoError(t, err)
		identity := func(id int) *clustertls.Identity {
			ident, err := ca.Identity(id, time.Now())
			require.NoError(t, err)
			return ident
		}
		c := start(t, 1, clustertest.Options{Configure: func(cfg *clusternode.Config) {
			cfg.TLS, cfg.RaftTransport = identity(cfg.ID), nil
		}})
		leader := c.Node(1)

		addr := rafttest.Addr(2)
		ln, err := c.Net.Listen(addr)
		require.NoError(t, err)
		joiner, err := clusternode.Open(clusternode.Config{ID: 2, Peers: map[int]string{2: addr}, Join: true, DataDir: t.TempDir(),
			Listener: ln, Dial: c.Net.Dialer(addr), TLS: identity(2), HTTPAddr: "127.0.0.1:18002", FailoverAfter: time.Second})
		require.NoError(t, err)
		t.Cleanup(func() { _ = joiner.Close() })

		require.NoError(t, clusternode.AcceptPeer(joiner, 1), "no configuration yet: the leader, not in its Peers, gets in")
		require.ErrorIs(t, clusternode.AcceptPeer(leader, 9), clustertls.ErrNotMember, "the leader has a configuration")

		require.NoError(t, leader.AddNode(c.Ctx(), 2, addr))
		c.Await("node 2 registered and ready", func() (bool, string) {
			if ok, why := joiner.Ready(); !ok {
				return false, fmt.Sprint(why)
			}
			if n := len(leader.Nodes()); n != 2 {
				return false, fmt.Sprintf("node 1 lists %d brokers", n)
			}
			return true, ""
		})
		require.NoError(t, clusternode.AcceptPeer(joiner, 1))
		require.ErrorIs(t, clusternode.AcceptPeer(joiner, 9), clustertls.ErrNotMember, "with a configuration, a CA-issued stranger is refused")
	})
}
