package netmux

import "net"

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
