package clusternode_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/clustertls"
	"github.com/pystream/pystream/server/netmux"
	"github.com/pystream/pystream/server/replication"
)

// The two ends of a refused connection on the internal port, over the
// real netmux and TLS on loopback TCP in one process, waiting on
// channels and closes, never on the clock: a dialer that finds another
// node than the one it dialed, and the accepting node's log of the peers
// it refuses (docs/security.md § The internal port).

// lockedBuffer is a bytes.Buffer safe for concurrent use: a node's log.
type lockedBuffer struct {
	// mu guards buf.
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns the JSON log records written so far whose message is
// msg.
func (b *lockedBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range bytes.Lines(b.buf.Bytes()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(line, &rec), "log line %q", line)
		if rec[slog.MessageKey] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// startLoneNode opens node id of ca's cluster, alone in its Peers, on
// loopback TCP with mutual TLS, its log in JSON to logs when logs is set,
// its metrics on reg when reg is.
func startLoneNode(t *testing.T, ca *clustertls.CA, id int, logs io.Writer, reg prometheus.Registerer) (*clusternode.Node, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ident, err := ca.Identity(id, time.Now())
	require.NoError(t, err)
	// A data directory not made yet: the node makes it.
	cfg := clusternode.Config{ID: id, Peers: map[int]string{id: ln.Addr().String()}, DataDir: filepath.Join(t.TempDir(), "node", "data"), Listener: ln, TLS: ident,
		HTTPAddr: "127.0.0.1:1", Registerer: reg}
	if logs != nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	n, err := clusternode.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Close() })
	return n, ln.Addr().String()
}

// impostor is a Mux on loopback TCP whose TLS presents another node's
// certificate of the same CA and accepts any peer the CA signed: it
// counts the handshakes it saw refused and the connections that reached
// its listeners.
type impostor struct {
	addr    string
	mux     *netmux.Mux
	refused chan error
	// accepting ends when both listeners are closed.
	accepting sync.WaitGroup
	// mu guards reached.
	mu      sync.Mutex
	reached []net.Conn
}

func startImpostor(t *testing.T, ca *clustertls.CA, id int) *impostor {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ident, err := ca.Identity(id, time.Now())
	require.NoError(t, err)
	im := &impostor{addr: ln.Addr().String(), refused: make(chan error, 16)}
	im.mux = netmux.NewWithConfig(ln, netmux.Config{TLS: ident.Config(nil), Refused: func(_ net.Addr, err error) { im.refused <- err }})
	for _, l := range []net.Listener{im.mux.Listener(netmux.KindRaft), im.mux.Default()} {
		im.accepting.Add(1)
		go func() {
			defer im.accepting.Done()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				im.mu.Lock()
				im.reached = append(im.reached, c)
				im.mu.Unlock()
			}
		}()
	}
	go func() { _ = im.mux.Serve() }()
	t.Cleanup(func() { _ = im.mux.Close() })
	return im
}

// awaitRefused waits for the impostor's next refused handshake.
func (im *impostor) awaitRefused(t *testing.T) error {
	t.Helper()
	select {
	case err := <-im.refused:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("the impostor saw no refused handshake")
		return nil
	}
}

// closeAndReached closes the impostor and returns the connections that
// reached its listeners: every routing goroutine and accept loop is done.
func (im *impostor) closeAndReached() []net.Conn {
	_ = im.mux.Close()
	im.accepting.Wait()
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.reached
}

// A node that dials node 2's address and finds node 3's certificate there
// refuses the connection in its handshake: the call fails with
// clustertls.ErrWrongNode, and no kind byte, Raft message or HTTP request
// reaches the other end. The same through the operator's add-node, whose
// probe dials the node being added (membership.go): refused, and node 2
// is not added.
func TestInternalDialRefusesWrongNode(t *testing.T) {
	if testing.Short() {
		t.Skip("a node on TCP")
	}
	ca, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	n, _ := startLoneNode(t, ca, 1, nil, nil)
	im := startImpostor(t, ca, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, kind := range []byte{netmux.KindRaft, 0} { // Raft's, and the internal API's HTTP/2
		conn, err := clusternode.DialInternal(n, ctx, im.addr, 2, kind)
		require.ErrorIs(t, err, clustertls.ErrWrongNode, "kind %q", kind)
		require.Nil(t, conn)
		require.Error(t, im.awaitRefused(t), "the impostor's end of the handshake fails too")
	}

	// add-node 2 at the impostor's address, on the node once it leads.
	awaitNode(t, n, "node 1 leads", func() bool { return n.Controller() == 1 })
	err = n.AddNode(ctx, 2, im.addr)
	require.Equal(t, replication.CodeBadRequest, replication.CodeOf(err), "%v", err)
	require.Error(t, im.awaitRefused(t))
	_, nodes, err := n.ClusterNodes()
	require.NoError(t, err)
	var voters []int
	for _, v := range nodes {
		if v.Voter {
			voters = append(voters, v.ID)
		}
	}
	require.Equal(t, []int{1}, voters, "node 2 was not added")

	require.Empty(t, im.closeAndReached(), "nothing reached the impostor's listeners")
	select {
	case err := <-im.refused:
		t.Fatalf("an attempt more than the three made: %v", err)
	default:
	}
}

// awaitNode waits up to a minute for cond, looking again at every
// metadata change of n and every 10 ms.
func awaitNode(t *testing.T, n *clusternode.Node, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		clustertest.AwaitAny([]<-chan struct{}{n.Cluster().MetadataChanged()}, 10*time.Millisecond)
	}
}

// refusedLine is the message of a node's log line for a connection its
// internal port refused (security.go, refusedPeer).
const refusedLine = "internal port: connection refused"

// The internal port logs the first connection it refuses in its
// handshake for each remote IP and reason, with the peer's address and
// why, and counts every one (pystream_refused_connections_total): not a
// line per byte the peer sends, not a line per connection of a stranger
// that comes back (those are summed up once a minute, bounds.Refusals),
// not never, and nothing for a member's connection.
func TestInternalPortLogsRefusedPeerOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a node on TCP")
	}
	ca, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	logs := &lockedBuffer{}
	n, addr := startLoneNode(t, ca, 1, logs, reg)
	other, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	cert := func(ca *clustertls.CA, id int) []tls.Certificate {
		cp, kp, err := ca.Issue(id, time.Now())
		require.NoError(t, err)
		pair, err := tls.X509KeyPair(cp, kp)
		require.NoError(t, err)
		return []tls.Certificate{pair}
	}
	// Each attempt talks until the node closes its connection, and
	// returns its own address. The node reports a refusal before it
	// closes (netmux.Config.Refused), so each is logged by then.
	untilClosed := func(c net.Conn) {
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the node did not close the connection: %v", err)
	}
	tlsAttempt := func(certs []tls.Certificate) func() string {
		return func() string {
			raw, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer raw.Close()
			c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, Certificates: certs, MinVersion: tls.VersionTLS13}) //nolint:gosec // a stranger trusts any server
			// TLS 1.3: the client's side of the handshake ends before the
			// node has checked its certificate, and it may write.
			if c.Handshake() == nil {
				_, _ = c.Write([]byte{netmux.KindRaft})
			}
			untilClosed(raw)
			return raw.LocalAddr().String()
		}
	}
	attempts := []struct {
		name string
		try  func() string
	}{
		{"plain, many bytes", func() string {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			for i := range 64 { // many writes, each its own segment at best
				if _, err := fmt.Fprintf(c, "PRI * HTTP/2.0 %d\r\n\r\nSM\r\n\r\n", i); err != nil {
					break // closed already: refused at its first bytes
				}
			}
			untilClosed(c)
			return c.LocalAddr().String()
		}},
		{"no certificate", tlsAttempt(nil)},
		{"another CA's node 1", tlsAttempt(cert(other, 1))},
		{"node 9, not a member", tlsAttempt(cert(ca, 9))},
	}
	// Each kind of attempt twice: the second of each is counted, not
	// logged again (its IP and reason were, just now).
	const rounds = 2
	from := map[string]string{}
	for _, a := range attempts {
		from[a.try()] = a.name
	}
	for _, a := range attempts {
		a.try()
	}
	// A member's connection is no refusal: its request is answered, so
	// the node's end of its handshake is done.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = call(ctx, stranger{name: "member", certs: cert(ca, 1)}.http2(), "GET", addr, replication.PathRecords,
		url.Values{"topic": {"none"}, "partition": {"0"}, "from": {"0"}, "max_bytes": {"1"}}, nil)
	require.NoError(t, err)
	require.NoError(t, n.Close()) // every routing goroutine is done: the log is complete

	lines := logs.records(t, refusedLine)
	seen := map[string]int{}
	for _, rec := range lines {
		remote, _ := rec["remote"].(string)
		why, _ := rec["err"].(string)
		name, ok := from[remote]
		require.True(t, ok, "a refusal of %q, which no attempt made: %v", remote, rec)
		require.NotEmpty(t, why, "%s: refused without why", name)
		seen[remote]++
	}
	for remote, name := range from {
		require.Equal(t, 1, seen[remote], "%s (%s): refusals logged", name, remote)
	}
	require.Len(t, lines, len(attempts), "one line per kind of refusal, none for the member's")
	require.Equal(t, float64(rounds*len(attempts)), refusedTotal(t, reg), "every refused connection counted")
}

// refusedTotal is the sum of pystream_refused_connections_total over its
// labels, as gathered from reg.
func refusedTotal(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "pystream_refused_connections_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			total += m.GetCounter().GetValue()
		}
	}
	return total
}
