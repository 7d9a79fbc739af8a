package raftmeta

import (
	"context"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// streamLayer is Raft's network transport over Config.Listener and
// Config.Dial. It is safe for concurrent use if they are.
type streamLayer struct {
	net.Listener
	advertise net.Addr
	dial      func(ctx context.Context, addr string) (net.Conn, error)
}

var _ raft.StreamLayer = (*streamLayer)(nil)

// Dial connects to a peer's Raft side within timeout.
func (s *streamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.dial(ctx, string(addr))
}

// Addr is the advertised address: Raft tells it to its peers, so it must
// be the one they dial, not the listener's own (which may be a wildcard).
func (s *streamLayer) Addr() net.Addr { return s.advertise }

// tcpDial is the Dial of a Config without one.
func tcpDial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// advertiseAddr is a TCP address kept as the string it was given.
type advertiseAddr string

func (a advertiseAddr) Network() string { return "tcp" }
func (a advertiseAddr) String() string  { return string(a) }
