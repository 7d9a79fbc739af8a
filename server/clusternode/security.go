package clusternode

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clustertls"
	"github.com/pystream/pystream/server/netmux"
	"github.com/pystream/pystream/server/replication"
)

// The internal port's mutual TLS (docs/security.md § The internal port).
// With Config.TLS, every connection a node accepts on its internal port
// is a TLS 1.3 server connection under the Mux (netmux.Config.TLS): the
// peer's certificate must chain to the cluster CA and name a member of the
// cluster (acceptPeer; any node of the CA while a joining node waits to
// be added, isMember), or the handshake fails and the connection is
// closed before Raft or the internal API reads a byte. Every connection a
// node opens (dialInternal) is a TLS client connection that wants the
// node id the address belongs to, then writes its kind byte. Handlers
// learn the peer's id from the request's context (connContext), and the
// requests that act for a node are refused unless the peer is that node
// (replication.ActsFor; registrations in checkProposer).

// acceptPeer is the accepting end's check of a peer's node id: a member
// of the cluster (isMember).
func (n *Node) acceptPeer(peer int) error {
	if !n.isMember(peer) {
		return fmt.Errorf("%w: node %d", clustertls.ErrNotMember, peer)
	}
	return nil
}

// isMember reports whether id belongs to the cluster: this node, or a
// member of the Raft configuration. While this node knows no
// configuration yet: with Join (a node waiting to be added), any node
// whose certificate the cluster CA issued — the leader that adds it is
// not in its Config.Peers, which need hold only its own entry, and the
// CA is the trust root: only the operator's add-node makes the leader
// dial it; without Join (a node about to bootstrap), a node of
// Config.Peers.
func (n *Node) isMember(id int) bool {
	if id == n.cfg.ID {
		return true
	}
	if servers := n.servers(); len(servers) > 0 {
		return slices.ContainsFunc(servers, func(s server) bool { return s.id == id })
	}
	if n.cfg.Join {
		return true // the certificate chains to the cluster CA (clustertls.Identity.Config)
	}
	_, ok := n.cfg.Peers[id]
	return ok
}

// server is one member of the Raft configuration: its id and address.
type server struct {
	id   int
	addr string
}

// servers is the Raft configuration this node knows; none before its
// Raft voter is open.
func (n *Node) servers() []server {
	r := n.raftp.Load()
	if r == nil {
		return nil
	}
	list, err := r.Servers()
	if err != nil {
		return nil
	}
	out := make([]server, 0, len(list))
	for _, s := range list {
		out = append(out, server{id: s.ID, addr: s.Addr})
	}
	return out
}

// idAt is the node id whose internal address addr is: as the metadata
// registers it, else as the Raft configuration has it, else in
// Config.Peers; 0 when no node is known there.
func (n *Node) idAt(addr string) int {
	for _, info := range n.Nodes() {
		if info.Addr == addr {
			return info.ID
		}
	}
	for _, s := range n.servers() {
		if s.addr == addr {
			return s.id
		}
	}
	for id, a := range n.cfg.Peers {
		if a == addr {
			return id
		}
	}
	return 0
}

// refusedPeer logs a connection the internal port refused in its
// handshake: the first of its IP and reason at once, the others counted
// and summed up once a minute (bounds.Refusals).
func (n *Node) refusedPeer(remote net.Addr, err error) {
	n.refusals.Refuse(n.log, remote, refusalReason(err), "internal port: connection refused", "remote", remote.String(), "err", err)
}

// refusalReason names why the internal port refused a handshake: the
// reason label of pystream_refused_connections_total.
func refusalReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, clustertls.ErrNoCertificate):
		return "no_certificate"
	case errors.Is(err, clustertls.ErrUntrusted):
		return "untrusted"
	case errors.Is(err, clustertls.ErrNoNodeID):
		return "no_node_id"
	case errors.Is(err, clustertls.ErrNotMember):
		return "not_member"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	default:
		return "handshake" // not TLS 1.3, or not TLS at all
	}
}

// connContext marks, with Config.TLS, the internal API connection's
// requests as needing a peer (replication.RequirePeer) and puts its
// authenticated peer in their context (replication.WithPeer). A
// connection without one — which the handshake should have refused — is
// thus refused request by request, never trusted.
func (n *Node) connContext(ctx context.Context, c net.Conn) context.Context {
	if n.cfg.TLS == nil {
		return ctx
	}
	ctx = replication.RequirePeer(ctx)
	tc := netmux.TLSConn(c)
	if tc == nil {
		return ctx
	}
	id, err := clustertls.PeerID(tc.ConnectionState())
	if err != nil {
		return ctx
	}
	return replication.WithPeer(ctx, id)
}

// dialRaw opens a connection to a node's internal address (after Routes):
// Config.Dial's, else TCP.
func (n *Node) dialRaw(ctx context.Context, addr string) (net.Conn, error) {
	if n.cfg.Dial != nil {
		return n.cfg.Dial(ctx, n.route(addr))
	}
	// TCP keepalives within about a call deadline: a peer whose machine
	// or network went away without a word is noticed by the kernel too.
	// (They cannot see a peer whose kernel still acknowledges the bytes
	// its process does not read — a paused process, a proxy that holds
	// them: the call deadlines and the HTTP/2 pings see those.)
	d := net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: n.callDeadline / 2, Interval: n.callDeadline / 4, Count: 2}}
	return d.DialContext(ctx, "tcp", n.route(addr))
}

// dialInternal opens a connection to the internal port at addr: with TLS,
// a handshake that wants node want (when it is 0, the node at addr as
// idAt knows it; when no node is known there, any member); then the kind
// byte, unless kind is 0 (HTTP needs none).
func (n *Node) dialInternal(ctx context.Context, addr string, want int, kind byte) (net.Conn, error) {
	conn, err := n.dialRaw(ctx, addr)
	if err != nil {
		return nil, err
	}
	if n.cfg.TLS != nil {
		if want == 0 {
			want = n.idAt(addr)
		}
		check := n.acceptPeer
		if want != 0 {
			check = clustertls.WantNode(want)
		}
		tc := tls.Client(conn, n.cfg.TLS.Config(check))
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("clusternode: internal port %s: %w", addr, err)
		}
		conn = tc
	}
	if kind == 0 {
		return hideTLS{conn}, nil
	}
	return netmux.WriteKind(ctx, conn, addr, kind)
}

// hideTLS hides a *tls.Conn from net/http, which speaks h2c over it as
// over any connection: the TLS is the internal port's, beneath HTTP.
type hideTLS struct{ net.Conn }

// checkProposer refuses a forwarded proposal without the authenticated
// peer a port with TLS requires, and a registration of another node than
// that peer: a node registers only its own addresses
// (replication.Authenticated decides both).
func checkProposer(ctx context.Context, cmd []byte) error {
	if _, _, err := replication.Authenticated(ctx); err != nil {
		return err
	}
	c, err := cluster.ParseMetaCommand(cmd)
	if err != nil || c.Op != cluster.OpRegisterNode || c.Node == nil {
		return nil // Raft's state machine refuses what does not parse
	}
	return replication.ActsFor(ctx, c.Node.ID, "register")
}
