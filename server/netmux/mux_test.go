package netmux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startMux listens on a loopback port, registers the Raft and default
// listeners, serves, and closes everything at the end of the test.
func startMux(t *testing.T, cfg Config) (m *Mux, raft, def net.Listener, served <-chan error) {
	t.Helper()
	base, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	m = NewWithConfig(base, cfg)
	raft = m.Listener(KindRaft)
	def = m.Default()
	done := make(chan error, 1)
	go func() { done <- m.Serve() }()
	t.Cleanup(func() { m.Close() })
	return m, raft, def, done
}

// echo accepts on l and echoes every connection until l closes.
func echo(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			io.Copy(c, c)
		}()
	}
}

// roundTrip writes msg on c and reads as many bytes back.
func roundTrip(t *testing.T, c net.Conn, msg string) string {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	buf := make([]byte, len(msg))
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)
	return string(buf)
}

// requireClosedByPeer waits up to within for the peer to close c.
func requireClosedByPeer(t *testing.T, c net.Conn, within time.Duration) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(within)))
	_, err := c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the mux should have closed the connection")
}

// TestNetmuxRoutesRaftAndHTTP2: on one port, a connection dialled with
// KindRaft reaches the Raft listener without its kind byte, and an h2c
// client reaches a real http.Server on the default listener, whose HTTP/2
// preface arrives whole.
func TestNetmuxRoutesRaftAndHTTP2(t *testing.T) {
	m, raft, def, _ := startMux(t, Config{})
	go echo(raft)

	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Protocols: &protocols,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s", r.Proto, r.URL.Path)
		}),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(def) }()
	defer func() {
		require.NoError(t, srv.Close())
		require.ErrorIs(t, <-served, http.ErrServerClosed)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := Dial(ctx, m.Addr().String(), KindRaft)
	require.NoError(t, err)
	defer rc.Close()
	require.Equal(t, "hello raft", roundTrip(t, rc, "hello raft"), "the kind byte is consumed, the rest passes")

	tr := &http.Transport{Protocols: &protocols}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for _, path := range []string{"/a", "/b"} {
		resp, err := client.Get("http://" + m.Addr().String() + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, 2, resp.ProtoMajor)
		require.Equal(t, "HTTP/2.0 "+path, string(body))
	}

	// The Raft connection still works beside the HTTP one.
	require.Equal(t, "again", roundTrip(t, rc, "again"))
}

// TestNetmuxDefaultReplaysFirstByte: a connection of no registered kind
// reaches the default listener with every byte, the first included, even
// when it arrives alone.
func TestNetmuxDefaultReplaysFirstByte(t *testing.T) {
	m, _, def, _ := startMux(t, Config{})
	go echo(def)
	c, err := net.Dial("tcp", m.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, "x", roundTrip(t, c, "x"))
	require.Equal(t, "yz", roundTrip(t, c, "yz"))
}

// TestNetmuxSilentConnClosed: a connection that sends nothing is closed
// after FirstByteTimeout, and while it waits other connections are routed
// at once (the first byte is read off the accept loop).
func TestNetmuxSilentConnClosed(t *testing.T) {
	const timeout = 500 * time.Millisecond
	m, raft, _, _ := startMux(t, Config{FirstByteTimeout: timeout})
	go echo(raft)

	// The mux arms its timer once it accepts, which is after the dial began
	// but may be before Dial returns here: the lower bound counts from the
	// dial's start.
	dialed := time.Now()
	silent, err := net.Dial("tcp", m.Addr().String())
	require.NoError(t, err)
	defer silent.Close()
	start := time.Now()

	rc, err := Dial(context.Background(), m.Addr().String(), KindRaft)
	require.NoError(t, err)
	defer rc.Close()
	require.Equal(t, "ok", roundTrip(t, rc, "ok"))
	require.Less(t, time.Since(start), timeout, "a silent connection must not hold up another")

	requireClosedByPeer(t, silent, 5*time.Second)
	require.GreaterOrEqual(t, time.Since(dialed), timeout)
}

// TestNetmuxConnClosedBeforeFirstByte: a client that hangs up before its
// first byte is dropped quietly; the mux goes on routing.
func TestNetmuxConnClosedBeforeFirstByte(t *testing.T) {
	m, raft, _, _ := startMux(t, Config{})
	go echo(raft)
	for range 3 {
		c, err := net.Dial("tcp", m.Addr().String())
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
	rc, err := Dial(context.Background(), m.Addr().String(), KindRaft)
	require.NoError(t, err)
	defer rc.Close()
	require.Equal(t, "still here", roundTrip(t, rc, "still here"))
}

// TestNetmuxCloseUnblocksAccept: Close unblocks Accept on every
// sub-listener with net.ErrClosed, closes connections still waiting for
// their first byte, and Serve returns nil.
func TestNetmuxCloseUnblocksAccept(t *testing.T) {
	m, raft, def, served := startMux(t, Config{})
	silent, err := net.Dial("tcp", m.Addr().String())
	require.NoError(t, err)
	defer silent.Close()

	errs := make(chan error, 2)
	for _, l := range []net.Listener{raft, def} {
		go func() {
			_, err := l.Accept()
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond) // let both block in Accept
	require.NoError(t, m.Close())
	for range 2 {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, net.ErrClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("Accept still blocked after Close")
		}
	}
	require.NoError(t, <-served)
	requireClosedByPeer(t, silent, 5*time.Second)
	require.NoError(t, m.Close(), "Close is idempotent")

	_, err = m.Listener('Z').Accept()
	require.ErrorIs(t, err, net.ErrClosed, "a listener taken after Close is closed")
}

// TestNetmuxSubListenerClose: closing one sub-listener unblocks its Accept
// and closes connections of its kind; the default listener goes on, and
// a new listener of the kind can be taken on the same Mux.
func TestNetmuxSubListenerClose(t *testing.T) {
	m, raft, def, _ := startMux(t, Config{})
	go echo(def)

	accepted := make(chan error, 1)
	go func() {
		_, err := raft.Accept()
		accepted <- err
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, raft.Close())
	require.NoError(t, raft.Close(), "Close is idempotent")
	require.ErrorIs(t, <-accepted, net.ErrClosed)

	rc, err := Dial(context.Background(), m.Addr().String(), KindRaft)
	require.NoError(t, err)
	defer rc.Close()
	requireClosedByPeer(t, rc, 5*time.Second)

	c, err := net.Dial("tcp", m.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, "GET", roundTrip(t, c, "GET"))

	// A new listener of the kind takes over on the same port.
	again := m.Listener(KindRaft)
	require.NotSame(t, raft, again)
	require.Same(t, again, m.Listener(KindRaft))
	go echo(again)
	rc2, err := Dialer(KindRaft)(context.Background(), m.Addr().String())
	require.NoError(t, err)
	defer rc2.Close()
	require.Equal(t, "back", roundTrip(t, rc2, "back"))
}

// TestNetmuxNoDefault: without a default listener, a connection of no
// registered kind is closed.
func TestNetmuxNoDefault(t *testing.T) {
	base, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	m := New(base)
	defer m.Close()
	go echo(m.Listener(KindRaft))
	go m.Serve()

	c, err := net.Dial("tcp", m.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = c.Read(make([]byte, 1))
	require.Error(t, err, "the mux should have closed the connection")
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "closed, not timed out: %v", err)
}

// TestNetmuxBaseClosedOutside: when the base listener is closed by someone
// else, Serve returns an error matching net.ErrClosed and the
// sub-listeners close too.
func TestNetmuxBaseClosedOutside(t *testing.T) {
	base, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	m := New(base)
	raft := m.Listener(KindRaft)
	served := make(chan error, 1)
	go func() { served <- m.Serve() }()
	require.NoError(t, base.Close())
	require.ErrorIs(t, <-served, net.ErrClosed)
	_, err = raft.Accept()
	require.ErrorIs(t, err, net.ErrClosed)
	require.NoError(t, m.Close())
}

// TestNetmuxDialRefused: Dial to a port nobody listens on fails with a
// wrapped dial error.
func TestNetmuxDialRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	_, err = Dial(context.Background(), addr, KindRaft)
	var oe *net.OpError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "dial", oe.Op)
}
