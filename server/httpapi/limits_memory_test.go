package httpapi

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// The memory tests (docs/phase-6-network-api.md, "Memory"): many clients that start
// a request and stall must not make the server hold memory in proportion
// to what they announce or what they were asked to be sent. Each measures
// the Go heap in use (after a GC) of this process, which runs the server,
// before and while the clients stall. Loopback only, every loop bounded;
// PYSTREAM_SOAK=1 runs the heavier variants.

// heapInuse is the heap in use after a collection.
func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// soak reports whether the heavier variants run.
func soak() bool { return os.Getenv("PYSTREAM_SOAK") == "1" }

// waitFor polls cond every 10 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// N connections each announce a 64 MiB body, send one byte and stall.
// Before bodies were read as they arrive, each cost a 64 MiB buffer the
// moment its headers were read (1,000 connections took a server from 99 MB
// to 1.1 GB); now each costs what it sent. The in-flight limit is raised
// out of the way: this pins the reader, TestLimitsInflight the limit.
func TestLimitsMemoryHalfSentBodies(t *testing.T) {
	n := 500
	if soak() {
		n = 2000
	}
	const announced = 64 << 20
	r := startServer(t, t.TempDir(), 1, func(c *testConfig) {
		c.MaxRequestBytes = MaxRequestBytesLimit
		c.MaxInflightBytes = MaxInflightBytesLimit
	})
	_, _, err := r.client.CreateTopic(t.Context(), "orders", 1, 1)
	require.NoError(t, err)
	addr := r.base[len("http://"):]

	before := heapInuse()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = fmt.Fprintf(c, "POST /api/topics/orders/records HTTP/1.1\r\nHost: %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\nx", addr, announced)
		require.NoError(t, err)
	}
	// Every handler is in flight (admitted, reading its body).
	waitFor(t, 5*time.Second, func() bool { return r.srv.inflight.Reserved() == int64(n)*announced }, "every body to be in flight")
	time.Sleep(100 * time.Millisecond) // past admit, into readBody
	during := heapInuse()
	growth := int64(during) - int64(before)
	t.Logf("%d connections announcing %d MiB each: heap in use %d MiB -> %d MiB (growth %d MiB; announced total %d MiB)",
		n, announced>>20, before>>20, during>>20, growth>>20, int64(n)*announced>>20)
	require.Less(t, growth, int64(64<<20), "heap growth must not follow Content-Length")

	// The server still answers.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err = r.client.Health(ctx)
	require.NoError(t, err)
}

// dialSlowReader connects with a receive buffer of a few KiB, so that a
// client that never reads stalls the server's writes early.
func dialSlowReader(addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return d.Dial("tcp", addr)
}

// M clients ask for max=1000 of large records, at the largest max_bytes,
// and never read the answer. Before answers were streamed, each answer was
// built whole (records, then their JSON) and held until the write timeout
// (100 such clients held 1.94 GB); now each holds about one chunk of
// records and the encoder's buffer.
func TestLimitsMemoryNonReadingFetchers(t *testing.T) {
	m := 50
	if soak() {
		m = 200
	}
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	value := make([]byte, 256<<10)
	for i := range 20 { // 5 MiB: more than the 4 MiB an answer may carry
		value[0] = byte(i)
		_, err := r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: value}})
		require.NoError(t, err)
	}
	addr := r.base[len("http://"):]

	before := heapInuse()
	conns := make([]net.Conn, 0, m)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range m {
		c, err := dialSlowReader(addr)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = fmt.Fprintf(c, "GET /api/topics/orders/partitions/0/records?offset=0&max=1000&max_bytes=%d HTTP/1.1\r\nHost: %s\r\n\r\n", MaxFetchBytes, addr)
		require.NoError(t, err)
	}
	// Let every answer be read and stall on its connection.
	time.Sleep(1500 * time.Millisecond)
	during := heapInuse()
	growth := int64(during) - int64(before)
	t.Logf("%d fetchers not reading max=1000 answers of 4 MiB: heap in use %d MiB -> %d MiB (growth %d MiB)",
		m, before>>20, during>>20, growth>>20)
	require.Less(t, growth, int64(m)*(1<<20)+16<<20, "about one chunk per stalled client, not its answer")
	// The answers were real, stalled answers, not refusals.
	head := make([]byte, 15)
	require.NoError(t, conns[0].SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadFull(conns[0], head)
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 200 OK", string(head))
}
