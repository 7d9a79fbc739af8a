package netmux

import (
	"crypto/tls"
	"net"
)

// replayConn is a connection whose first byte was read by the Mux and is
// handed back by the first Read. It is used by one reader at a time, as
// every net.Conn's reads are.
type replayConn struct {
	net.Conn
	first   byte
	pending bool
}

func (c *replayConn) Read(p []byte) (int, error) {
	if !c.pending || len(p) == 0 {
		return c.Conn.Read(p)
	}
	c.pending = false
	p[0] = c.first
	return 1, nil
}

// NetConn returns the connection beneath: the accepted one, or the
// *tls.Conn over it when the Mux speaks TLS.
func (c *replayConn) NetConn() net.Conn { return c.Conn }

// TLSConn returns the *tls.Conn of a connection a Mux's listener
// accepted (looking through the Mux's own wrapping, and any other
// wrapper with a NetConn method), or nil when it is not a TLS connection.
// An http.Server's ConnContext reads the peer's certificate through it.
func TLSConn(c net.Conn) *tls.Conn {
	for c != nil {
		if tc, ok := c.(*tls.Conn); ok {
			return tc
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}
