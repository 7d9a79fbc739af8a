package netmux

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/clustertls"
)

// With Config.TLS, the handshake comes before the kind byte: a TLS dialer
// that writes 'R' reaches the Raft listener, one that writes anything
// else the default listener, and both see the peer's certificate through
// TLSConn. A plain connection, or a handshake that fails, reaches no
// listener and is reported once to Refused.
func TestMuxTLS(t *testing.T) {
	ca, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	n1, err := ca.Identity(1, time.Now())
	require.NoError(t, err)
	n2, err := ca.Identity(2, time.Now())
	require.NoError(t, err)
	var mu sync.Mutex
	var refused []error
	_, raft, def, _ := startMux(t, Config{TLS: n1.Config(nil), Refused: func(_ net.Addr, err error) {
		mu.Lock()
		refused = append(refused, err)
		mu.Unlock()
	}})
	accepted := make(chan net.Conn, 2)
	for _, l := range []net.Listener{raft, def} {
		go func() {
			c, err := l.Accept()
			if err == nil {
				accepted <- c
			}
		}()
	}
	dialTLS := func() *tls.Conn {
		raw, err := net.Dial("tcp", raft.Addr().String())
		require.NoError(t, err)
		c := tls.Client(raw, n2.Config(clustertls.WantNode(1)))
		require.NoError(t, c.Handshake())
		t.Cleanup(func() { c.Close() })
		return c
	}

	c := dialTLS()
	_, err = WriteKind(context.Background(), c, "node 1", KindRaft)
	require.NoError(t, err)
	got := <-accepted
	tc := TLSConn(got)
	require.NotNil(t, tc, "the Raft listener's connection is TLS")
	peer, err := clustertls.PeerID(tc.ConnectionState())
	require.NoError(t, err)
	require.Equal(t, 2, peer)

	c = dialTLS()
	_, err = c.Write([]byte("PRI"))
	require.NoError(t, err)
	got = <-accepted
	_, isTLS := got.(*tls.Conn)
	require.False(t, isTLS, "the default listener's connection is no *tls.Conn: an http.Server serves it h2c")
	tc = TLSConn(got)
	require.NotNil(t, tc)
	buf := make([]byte, 3)
	_, err = got.Read(buf[:1])
	require.NoError(t, err)
	require.Equal(t, byte('P'), buf[0], "the first byte is replayed")

	// A plain connection: refused, reported once, reaching no listener.
	plain, err := net.Dial("tcp", raft.Addr().String())
	require.NoError(t, err)
	defer plain.Close()
	_, err = plain.Write([]byte("RAFT AppendEntries at term 1000"))
	require.NoError(t, err)
	requireClosedByPeer(t, plain, 5*time.Second)
	mu.Lock()
	require.Len(t, refused, 1)
	mu.Unlock()
	select {
	case c := <-accepted:
		t.Fatalf("a plain connection reached a listener: %v", c.RemoteAddr())
	default:
	}
	require.Nil(t, TLSConn(plain))
}

// A TLS client that never finishes its handshake is closed after the
// first-byte timeout: the timeout covers the handshake.
func TestMuxTLSHandshakeTimeout(t *testing.T) {
	ca, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	n1, err := ca.Identity(1, time.Now())
	require.NoError(t, err)
	_, raft, _, _ := startMux(t, Config{TLS: n1.Config(nil), FirstByteTimeout: 100 * time.Millisecond})
	c, err := net.Dial("tcp", raft.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte{0x16, 0x03, 0x01}) // the start of a ClientHello, and silence
	require.NoError(t, err)
	requireClosedByPeer(t, c, 5*time.Second)
}
