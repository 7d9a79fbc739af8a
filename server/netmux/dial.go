package netmux

import (
	"context"
	"fmt"
	"net"
	"time"
)

// Dial connects to a Mux's address over TCP and writes the kind byte, so
// the Mux routes the connection to the listener of that kind. ctx bounds
// both the dial and the write.
func Dial(ctx context.Context, addr string, kind byte) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("netmux: dial %s: %w", addr, err)
	}
	return WriteKind(ctx, conn, addr, kind)
}

// WriteKind writes the kind byte on a connection already open to a Mux
// at addr (a TLS one, after its handshake, when the Mux speaks TLS), and
// returns it; on failure it closes it. ctx bounds the write.
func WriteKind(ctx context.Context, conn net.Conn, addr string, kind byte) (net.Conn, error) {
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetWriteDeadline(deadline); err != nil {
			conn.Close()
			return nil, fmt.Errorf("netmux: dial %s: %w", addr, err)
		}
	}
	if _, err := conn.Write([]byte{kind}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("netmux: dial %s: write kind byte: %w", addr, err)
	}
	if err := conn.SetWriteDeadline(time.Time{}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("netmux: dial %s: %w", addr, err)
	}
	return conn, nil
}

// Dialer returns Dial bound to kind, in the shape a protocol's dial hook
// takes (raftmeta.Config.Dial, for one).
func Dialer(kind byte) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		return Dial(ctx, addr, kind)
	}
}
