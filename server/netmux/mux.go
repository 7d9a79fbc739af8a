package netmux

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/pystream/pystream/server/bounds"
)

// Mux splits the connections of one base listener by their first byte.
// Create it with New or NewWithConfig, register listeners, then run Serve.
// A Mux is safe for concurrent use.
type Mux struct {
	base    net.Listener
	timeout time.Duration
	tls     *tls.Config
	refused func(net.Addr, error)

	// done is closed by Close or when Serve ends; it unblocks every Accept.
	done      chan struct{}
	closeOnce sync.Once

	// routing counts the per-connection goroutines, so Close can wait for
	// them. Add is called only with mu held and closed false.
	routing sync.WaitGroup

	// mu guards the fields below.
	mu sync.Mutex
	// kinds holds the listener registered for each kind byte.
	kinds map[byte]*listener
	// def is the default listener, nil until Default is called.
	def *listener
	// pending holds the connections whose first byte has not arrived.
	pending map[net.Conn]struct{}
	// closed is set by Close; Serve then returns nil.
	closed bool
}

// New returns a Mux over l with the default Config. It does not accept
// until Serve is called.
func New(l net.Listener) *Mux { return NewWithConfig(l, Config{}) }

// NewWithConfig returns a Mux over l tuned by cfg. It does not accept until
// Serve is called.
func NewWithConfig(l net.Listener, cfg Config) *Mux {
	return &Mux{
		base:    bounds.Guard(l, "internal", cfg.Logger, cfg.AcceptErrors),
		timeout: cfg.firstByteTimeout(),
		tls:     cfg.TLS,
		refused: cfg.Refused,
		done:    make(chan struct{}),
		kinds:   make(map[byte]*listener),
		pending: make(map[net.Conn]struct{}),
	}
}

// Addr returns the base listener's address.
func (m *Mux) Addr() net.Addr { return m.base.Addr() }

// Listener returns the listener that receives every connection whose first
// byte is kind, with that byte consumed. Calling it again with the same
// kind returns the same listener while it is open, and a new one after it
// was closed (so a protocol can stop and start again on the same port).
func (m *Mux) Listener(kind byte) net.Listener {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.kinds[kind]; ok && !l.isClosed() {
		return l
	}
	l := newListener(m)
	m.kinds[kind] = l
	return l
}

// Default returns the listener that receives every connection whose first
// byte is of no registered kind, with that byte replayed to its first Read.
// Calling it again returns the same listener while it is open, and a new
// one after it was closed.
func (m *Mux) Default() net.Listener {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.def == nil || m.def.isClosed() {
		m.def = newListener(m)
	}
	return m.def
}

// Serve accepts connections from the base listener and routes them until
// the base listener is closed. An accept that fails for want of a file
// descriptor is retried after a backoff (server/bounds.Listener), logged
// once per episode. Serve returns nil when Close ended it, and the base
// listener's error otherwise; either way the Mux is closed after it.
// Call it once.
func (m *Mux) Serve() error {
	defer m.shutdown()
	for {
		conn, err := m.base.Accept()
		if err != nil {
			m.mu.Lock()
			closed := m.closed
			m.mu.Unlock()
			if closed {
				return nil
			}
			return fmt.Errorf("netmux: accept: %w", err)
		}
		if !m.track(conn) {
			conn.Close()
			return nil
		}
		go m.route(conn)
	}
}

// Close closes the base listener, every sub-listener and every connection
// still waiting for its first byte, and waits for the routing goroutines.
// Connections already handed to a listener are the accepter's to close.
// Close is idempotent; it returns the base listener's Close error the
// first time.
func (m *Mux) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	err := m.base.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	m.shutdown()
	m.routing.Wait()
	return err
}

// shutdown closes done and every connection waiting for its first byte.
func (m *Mux) shutdown() {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		for c := range m.pending {
			c.Close()
		}
		m.mu.Unlock()
		close(m.done)
	})
}

// track records conn as waiting for its first byte and counts its routing
// goroutine. It returns false when the Mux is closed. Counting under mu,
// after the closed check, orders every Add before Close's Wait.
func (m *Mux) track(conn net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.pending[conn] = struct{}{}
	m.routing.Add(1)
	return true
}

// untrack forgets conn as waiting for its first byte.
func (m *Mux) untrack(conn net.Conn) {
	m.mu.Lock()
	delete(m.pending, conn)
	m.mu.Unlock()
}

// route runs conn's TLS handshake, if any, and reads its first byte
// within the timeout, then hands conn to its listener. It runs in a
// goroutine of its own per connection.
func (m *Mux) route(raw net.Conn) {
	defer m.routing.Done()
	conn := raw
	var first [1]byte
	// Both directions: a handshake writes too.
	err := conn.SetDeadline(time.Now().Add(m.timeout))
	if err == nil && m.tls != nil {
		tc := tls.Server(raw, m.tls)
		if err = tc.Handshake(); err != nil {
			m.untrack(raw)
			// Reported before the close: a peer that sees its connection
			// closed knows that the refusal was reported.
			if m.refused != nil {
				m.refused(raw.RemoteAddr(), err)
			}
			raw.Close()
			return
		}
		conn = tc
	}
	if err == nil {
		_, err = io.ReadFull(conn, first[:])
	}
	if err == nil {
		err = conn.SetDeadline(time.Time{})
	}
	m.untrack(raw)
	if err != nil {
		conn.Close()
		return
	}

	m.mu.Lock()
	l, ok := m.kinds[first[0]]
	if !ok {
		l = m.def
	}
	m.mu.Unlock()
	if l == nil {
		conn.Close()
		return
	}
	if !ok {
		conn = &replayConn{Conn: conn, first: first[0], pending: true}
	}
	l.deliver(conn)
}
