package faultnet

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// State is what a Link does with the connections it carries.
type State int

const (
	// Open forwards every byte both ways.
	Open State = iota
	// Cut closes every connection the link carries and refuses new ones
	// (accepted, then closed at once), as a reset would.
	Cut
	// Held keeps every connection open and forwards nothing: bytes read
	// from either side wait in the link until it is open again. New
	// connections are accepted and held the same way.
	Held
)

// String names the state as the chaos suite's tables do.
func (s State) String() string {
	switch s {
	case Open:
		return "open"
	case Cut:
		return "cut"
	case Held:
		return "held"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// dialTimeout bounds the link's own dial of its target.
const dialTimeout = 5 * time.Second

// Link forwards the TCP connections made to its loopback address to one
// target address, in the state the test sets. It is safe for concurrent
// use.
type Link struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	// mu guards the fields below.
	mu    sync.Mutex
	state State
	// open is closed while the state is Open, and replaced by a fresh
	// channel when it leaves Open: a forwarder holding bytes waits on it.
	open   chan struct{}
	conns  map[net.Conn]struct{}
	closed bool
}

// Listen starts a Link on a free loopback port that forwards to target.
func Listen(target string) (*Link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultnet: listen: %w", err)
	}
	open := make(chan struct{})
	close(open)
	l := &Link{ln: ln, target: target, open: open, conns: map[net.Conn]struct{}{}}
	l.wg.Go(l.serve)
	return l, nil
}

// Addr is the link's address, host:port.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// Target is the address the link forwards to.
func (l *Link) Target() string { return l.target }

// State is the link's current state.
func (l *Link) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// Set puts the link in state s. Cut closes every connection it carries;
// Held stops forwarding without closing; Open forwards again, first what
// was held.
func (l *Link) Set(s State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s == l.state {
		return
	}
	if l.state == Open {
		l.open = make(chan struct{})
	}
	l.state = s
	switch s {
	case Open:
		close(l.open)
	case Cut:
		for c := range l.conns {
			c.Close()
		}
	}
}

// Close stops the link, closes every connection it carries and waits for
// its goroutines.
func (l *Link) Close() error {
	err := l.ln.Close()
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	if l.state != Open {
		close(l.open) // wake held forwarders: their conns are closed
		l.state = Open
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

func (l *Link) serve() {
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		if !l.track(conn) {
			conn.Close() // cut: refused
			continue
		}
		l.wg.Go(func() { l.forward(conn) })
	}
}

// track adds conn to the connections a cut closes; false when the link is
// cut or closed.
func (l *Link) track(conn net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == Cut || l.closed {
		return false
	}
	l.conns[conn] = struct{}{}
	return true
}

func (l *Link) untrack(conns ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range conns {
		delete(l.conns, c)
		c.Close()
	}
}

// gate returns once the link is open (true), or false once the link is
// cut or done is closed.
func (l *Link) gate(done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		state, open := l.state, l.open
		l.mu.Unlock()
		switch state {
		case Open:
			return true
		case Cut:
			return false
		}
		select {
		case <-open:
		case <-done:
			return false
		}
	}
}

// forward carries one connection both ways until either side ends or the
// link is cut.
func (l *Link) forward(in net.Conn) {
	// A held link holds the dial too: the client's connection is
	// accepted and waits, as a connection over a dead path would.
	if !l.gate(nil) {
		l.untrack(in)
		return
	}
	d := net.Dialer{Timeout: dialTimeout}
	out, err := d.Dial("tcp", l.target)
	if err != nil {
		l.untrack(in)
		return
	}
	if !l.track(out) {
		l.untrack(in, out)
		return
	}
	stop := make(chan struct{})
	ended := make(chan struct{}, 2)
	go func() { l.copy(out, in, stop); ended <- struct{}{} }()
	go func() { l.copy(in, out, stop); ended <- struct{}{} }()
	<-ended
	close(stop) // a direction holding bytes gives up
	l.untrack(in, out)
	<-ended
}

// copy forwards src to dst, holding each read's bytes while the link is
// held, until either side fails, the link is cut or stop is closed.
func (l *Link) copy(dst, src net.Conn, stop <-chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !l.gate(stop) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a failure: the connection ends both ways
		}
	}
}
