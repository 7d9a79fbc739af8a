package netmux

import (
	"net"
	"sync"
)

// listener is a sub-listener of a Mux: it receives the connections the
// Mux routes to it. It is safe for concurrent use.
type listener struct {
	mux   *Mux
	conns chan net.Conn

	// closed is closed by Close; closeOnce guards it.
	closed    chan struct{}
	closeOnce sync.Once
}

var _ net.Listener = (*listener)(nil)

func newListener(m *Mux) *listener {
	return &listener{mux: m, conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for the next connection routed to this listener. It returns
// net.ErrClosed once the listener or its Mux is closed.
func (l *listener) Accept() (net.Conn, error) {
	// Prefer closing over a connection that arrived at the same time.
	select {
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.mux.done:
		return nil, net.ErrClosed
	default:
	}
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.mux.done:
		return nil, net.ErrClosed
	}
}

// Close stops this listener; connections of its kind are closed from now
// on. The Mux and its other listeners go on. Close is idempotent.
func (l *listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// isClosed reports whether Close was called.
func (l *listener) isClosed() bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// Addr returns the Mux's base address.
func (l *listener) Addr() net.Addr { return l.mux.Addr() }

// deliver waits until an Accept takes conn, and closes conn when the
// listener or the Mux closes first.
func (l *listener) deliver(conn net.Conn) {
	select {
	case l.conns <- conn:
	case <-l.closed:
		conn.Close()
	case <-l.mux.done:
		conn.Close()
	}
}
