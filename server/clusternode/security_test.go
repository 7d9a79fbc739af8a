package clusternode

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clustertls"
	"github.com/pystream/pystream/server/replication"
)

// TestConnContextFailsClosed: with TLS configured, a request whose
// connection carries no authenticated peer (here a plain connection,
// which the handshake would have refused) is refused by every peer
// check — a registration, any proposal, a request acting for a node —
// with CodeForbidden, never let through; without TLS nothing is checked
// (docs/security.md § The internal port).
func TestConnContextFailsClosed(t *testing.T) {
	ca, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	ident, err := ca.Identity(1, time.Now())
	require.NoError(t, err)
	plain, other := net.Pipe()
	defer plain.Close()
	defer other.Close()
	register, err := cluster.EncodeMetaCommand(cluster.MetaCommand{Op: cluster.OpRegisterNode, Time: time.Now().UTC(),
		Node: &cluster.NodeInfo{ID: 2, Addr: "10.0.0.2:7000"}})
	require.NoError(t, err)
	healing, err := cluster.EncodeMetaCommand(cluster.MetaCommand{Op: cluster.OpSetHealing, Time: time.Now().UTC()})
	require.NoError(t, err)

	withTLS := (&Node{cfg: Config{ID: 1, TLS: ident}}).connContext(context.Background(), plain)
	for name, err := range map[string]error{
		"registration":    checkProposer(withTLS, register),
		"other proposal":  checkProposer(withTLS, healing),
		"heartbeat":       replication.ActsFor(withTLS, 2, "heartbeat"),
		"garbage command": checkProposer(withTLS, []byte("{")),
	} {
		require.Equal(t, replication.CodeForbidden, replication.CodeOf(err), "%s: %v", name, err)
	}

	without := (&Node{cfg: Config{ID: 1}}).connContext(context.Background(), plain)
	require.NoError(t, checkProposer(without, register))
	require.NoError(t, replication.ActsFor(without, 2, "heartbeat"))
}
