package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Network is an in-memory network for the nodes' internal APIs: a
// listener per address, connections that are net.Pipe pairs, and links
// that can be cut (connections close, dials fail) or held (nothing
// closes, no byte gets through until the link heals). It is safe for
// concurrent use.
type Network struct {
	// mu guards the fields below.
	mu        sync.Mutex
	listeners map[string]*listener
	// cut holds the broken links, both directions, as address pairs in
	// order; isolated the addresses cut off from every other.
	cut      map[[2]string]bool
	isolated map[string]bool
	// held maps each held link to a channel closed when it heals.
	held map[[2]string]chan struct{}
	// conns are the open connections with the two addresses they join.
	conns map[*conn][2]string
}

// ErrUnreachable is what a dial over a broken link, or to an address no
// one listens on, fails with.
var ErrUnreachable = errors.New("clustertest: address unreachable")

// NewNetwork returns an empty network.
func NewNetwork() *Network {
	return &Network{listeners: map[string]*listener{}, cut: map[[2]string]bool{}, isolated: map[string]bool{},
		held: map[[2]string]chan struct{}{}, conns: map[*conn][2]string{}}
}

func link(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// reachableLocked reports whether a and b can talk. n.mu must be held.
func (n *Network) reachableLocked(a, b string) bool {
	return a == b || !n.cut[link(a, b)] && !n.isolated[a] && !n.isolated[b]
}

// Listen opens the listener of addr. An address that is listened on
// already is an error.
func (n *Network) Listen(addr string) (net.Listener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.listeners[addr]; ok {
		return nil, fmt.Errorf("clustertest: %s is listened on already", addr)
	}
	l := &listener{n: n, addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[addr] = l
	return l, nil
}

// Dialer returns the dial function of the node at from: it reaches addr
// when the link between them is up and something listens there.
func (n *Network) Dialer(from string) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		n.mu.Lock()
		if _, ok := n.listeners[addr]; !ok {
			// An HTTP client names the port its scheme implies.
			if host, _, err := net.SplitHostPort(addr); err == nil {
				addr = host
			}
		}
		l := n.listeners[addr]
		if l == nil || !n.reachableLocked(from, addr) {
			n.mu.Unlock()
			return nil, fmt.Errorf("clustertest: dial %s from %s: %w", addr, from, ErrUnreachable)
		}
		a, b := net.Pipe()
		ends := link(from, addr)
		ca, cb := &conn{Conn: a, n: n, ends: ends, done: make(chan struct{})}, &conn{Conn: b, n: n, ends: ends, done: make(chan struct{})}
		n.conns[ca], n.conns[cb] = [2]string{from, addr}, [2]string{from, addr}
		n.mu.Unlock()
		select {
		case l.conns <- cb:
			return ca, nil
		case <-l.done:
		case <-ctx.Done():
		}
		_ = ca.Close()
		_ = cb.Close()
		return nil, fmt.Errorf("clustertest: dial %s from %s: %w", addr, from, ErrUnreachable)
	}
}

// Cut breaks the link between a and b, both ways: open connections
// between them close, and dials fail.
func (n *Network) Cut(a, b string) {
	n.mu.Lock()
	n.cut[link(a, b)] = true
	n.mu.Unlock()
	n.closeBroken()
}

// Isolate cuts addr off from every other address.
func (n *Network) Isolate(addr string) {
	n.mu.Lock()
	n.isolated[addr] = true
	n.mu.Unlock()
	n.closeBroken()
}

// Hold holds the link between a and b, both ways: nothing closes, and
// what is written on a connection between them — open or dialed later —
// is delivered only after Heal, as over a network that stops delivering
// without a word (or to a paused process).
func (n *Network) Hold(a, b string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.held[link(a, b)]; !ok {
		n.held[link(a, b)] = make(chan struct{})
	}
}

// Heal undoes every Cut, Isolate and Hold.
func (n *Network) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut, n.isolated = map[[2]string]bool{}, map[string]bool{}
	for _, ch := range n.held {
		close(ch)
	}
	n.held = map[[2]string]chan struct{}{}
}

// heldOn is the channel that closes when the link ends heals; nil when
// it is not held.
func (n *Network) heldOn(ends [2]string) chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.held[ends]
}

// closeBroken closes the connections over links that are broken now.
func (n *Network) closeBroken() {
	n.mu.Lock()
	var broken []*conn
	for c, ends := range n.conns {
		if !n.reachableLocked(ends[0], ends[1]) {
			broken = append(broken, c)
		}
	}
	n.mu.Unlock()
	for _, c := range broken {
		_ = c.Close()
	}
}

// conn is one end of a connection on the network.
type conn struct {
	net.Conn
	n *Network
	// ends is the link the connection is on; done closes with it.
	ends [2]string
	done chan struct{}
	once sync.Once

	// wmu guards the fields below: the bytes written while the link was
	// held, in order, and whether a goroutine delivers them.
	wmu      sync.Mutex
	pending  [][]byte
	flushing bool
}

// Write writes b, or while the link is held (or earlier writes still wait
// for it to heal) keeps it for later, in order, and returns at once — as
// a network that holds the bytes takes them into its buffers. The writer
// is not blocked: a caller that waits for an answer waits for the answer
// alone, as over TCP.
func (c *conn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	if c.flushing || c.n.heldOn(c.ends) != nil {
		c.pending = append(c.pending, append([]byte(nil), b...))
		if !c.flushing {
			c.flushing = true
			go c.flush()
		}
		c.wmu.Unlock()
		return len(b), nil
	}
	c.wmu.Unlock()
	return c.Conn.Write(b)
}

// flush delivers the kept bytes once the link heals, until none is left
// or the connection closes.
func (c *conn) flush() {
	for {
		if healed := c.n.heldOn(c.ends); healed != nil {
			select {
			case <-healed:
			case <-c.done:
				return
			}
			continue
		}
		c.wmu.Lock()
		if len(c.pending) == 0 {
			c.flushing = false
			c.wmu.Unlock()
			return
		}
		b := c.pending[0]
		c.pending = c.pending[1:]
		c.wmu.Unlock()
		if _, err := c.Conn.Write(b); err != nil {
			return
		}
	}
}

// Close closes the end and forgets it.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		close(c.done)
		c.n.mu.Lock()
		delete(c.n.conns, c)
		c.n.mu.Unlock()
	})
	return err
}

// listener is an address's listener.
type listener struct {
	n     *Network
	addr  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops the listener and frees its address for a restarted node.
func (l *listener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.n.mu.Lock()
		if l.n.listeners[l.addr] == l {
			delete(l.n.listeners, l.addr)
		}
		l.n.mu.Unlock()
	})
	return nil
}

func (l *listener) Addr() net.Addr { return addr(l.addr) }

// addr is an address of the network.
type addr string

func (a addr) Network() string { return "clustertest" }
func (a addr) String() string  { return string(a) }
