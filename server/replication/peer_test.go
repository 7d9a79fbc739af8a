package replication_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// call is one request that reached a fakePeer.
type call struct {
	Method string
	// Proto is the HTTP major version the request arrived on.
	Proto int
	// Req is the request as the peer received it: a cluster.ReplicateRequest,
	// RecordsRequest, DigestsRequest, CutRequest, ProduceRequest,
	// OffsetForTimeRequest or OperateRequest, a []byte (Propose), a
	// Heartbeat or a MembershipRequest.
	Req any
}

// fakePeer records every request that reaches it and answers with canned
// responses, or with err when it is set. The canned fields are set before
// the server starts and only read afterwards; fakePeer is safe for
// concurrent use.
type fakePeer struct {
	replicate cluster.ReplicateResponse
	records   cluster.RecordsResponse
	digests   cluster.DigestsResponse
	cut       cluster.CutResponse
	produce   cluster.ProduceResponse
	offTime   cluster.OffsetForTimeResponse
	operate   cluster.OperateResponse
	propose   []byte
	observe   replication.Observation
	err       error

	// mu guards calls.
	mu    sync.Mutex
	calls []call
}

var _ replication.Peer = (*fakePeer)(nil)

// MaxPayloadSize is the default: BodyLimit of it is MaxBodyBytes.
func (p *fakePeer) MaxPayloadSize() int { return log.DefaultMaxPayloadSize }

// protoKey carries the request's HTTP major version from the wrapping
// handler to the peer.
type protoKey struct{}

func (p *fakePeer) note(ctx context.Context, method string, req any) {
	proto, _ := ctx.Value(protoKey{}).(int)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, call{Method: method, Proto: proto, Req: req})
}

// Calls returns the requests that reached the peer so far.
func (p *fakePeer) Calls() []call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]call(nil), p.calls...)
}

func (p *fakePeer) Replicate(ctx context.Context, req cluster.ReplicateRequest) (cluster.ReplicateResponse, error) {
	p.note(ctx, "Replicate", req)
	return p.replicate, p.err
}

func (p *fakePeer) Records(ctx context.Context, req cluster.RecordsRequest) (cluster.RecordsResponse, error) {
	p.note(ctx, "Records", req)
	return p.records, p.err
}

func (p *fakePeer) Digests(ctx context.Context, req cluster.DigestsRequest) (cluster.DigestsResponse, error) {
	p.note(ctx, "Digests", req)
	return p.digests, p.err
}

func (p *fakePeer) Cut(ctx context.Context, req cluster.CutRequest) (cluster.CutResponse, error) {
	p.note(ctx, "Cut", req)
	return p.cut, p.err
}

func (p *fakePeer) Produce(ctx context.Context, req cluster.ProduceRequest) (cluster.ProduceResponse, error) {
	p.note(ctx, "Produce", req)
	return p.produce, p.err
}

func (p *fakePeer) OffsetForTime(ctx context.Context, req cluster.OffsetForTimeRequest) (cluster.OffsetForTimeResponse, error) {
	p.note(ctx, "OffsetForTime", req)
	return p.offTime, p.err
}

func (p *fakePeer) Operate(ctx context.Context, req cluster.OperateRequest) (cluster.OperateResponse, error) {
	p.note(ctx, "Operate", req)
	return p.operate, p.err
}

func (p *fakePeer) Propose(ctx context.Context, cmd []byte) ([]byte, error) {
	p.note(ctx, "Propose", cmd)
	return p.propose, p.err
}

func (p *fakePeer) Heartbeat(ctx context.Context, hb replication.Heartbeat) (replication.Observation, error) {
	p.note(ctx, "Heartbeat", hb)
	return p.observe, p.err
}

func (p *fakePeer) Membership(ctx context.Context, req replication.MembershipRequest) error {
	p.note(ctx, "Membership", req)
	return p.err
}

// onlyCall returns the one request that reached p, failing the test
// unless exactly one did, by method, over HTTP/2.
func onlyCall(t *testing.T, p *fakePeer, method string) any {
	t.Helper()
	calls := p.Calls()
	if len(calls) != 1 {
		t.Fatalf("peer saw %d calls, want 1: %+v", len(calls), calls)
	}
	c := calls[0]
	if c.Method != method {
		t.Fatalf("peer saw %s, want %s", c.Method, method)
	}
	// doc.go: the internal wire is HTTP/2 without TLS.
	if c.Proto != 2 {
		t.Fatalf("request arrived over HTTP/%d, want HTTP/2", c.Proto)
	}
	return c.Req
}

// node is a handler served on loopback the way a broker serves it: HTTP/1
// and HTTP/2 without TLS on one listener.
type node struct {
	Addr string
	mu   sync.Mutex
	// conns are the connections requests arrived on, by the client's
	// address. Not every connection accepted: another test's program may
	// dial a port it knew before this listener took it over.
	conns map[string]bool
}

// Conns is the number of connections requests arrived on.
func (n *node) Conns() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.conns)
}

// serve starts NewHandler(p, nil) on 127.0.0.1:0 until the test ends.
func serve(t testing.TB, p replication.Peer) *node {
	t.Helper()
	return serveHandler(t, replication.NewHandler(p, nil))
}

// serveHandler starts h on 127.0.0.1:0 until the test ends; serve's
// server, for answers NewHandler would never give.
func serveHandler(t testing.TB, h http.Handler) *node {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &node{Addr: ln.Addr().String(), conns: map[string]bool{}}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	protocols.SetHTTP1(true)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.mu.Lock()
			n.conns[r.RemoteAddr] = true
			n.mu.Unlock()
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), protoKey{}, r.ProtoMajor)))
		}),
		Protocols: &protocols,
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return n
}

// newClient returns a client closed when the test ends.
func newClient(t testing.TB) *replication.Client {
	c := replication.NewClient(nil, 0)
	t.Cleanup(c.Close)
	return c
}

// raw sends a request the Client would never build, over HTTP/2 without
// TLS, and returns the status and the *Error of the answer (nil when the
// body is not one, as with the mux's own 404 and 405).
func raw(t *testing.T, method, url string, body io.Reader) (int, *replication.Error) {
	t.Helper()
	status, b := rawBody(t, method, url, body)
	var e replication.Error
	if json.Unmarshal(b, &e) != nil || e.Code == "" {
		return status, nil
	}
	return status, &e
}

// rawBody is raw, returning the answer's body as it came.
func rawBody(t *testing.T, method, url string, body io.Reader) (int, []byte) {
	t.Helper()
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return sendBody(t, &protocols, req)
}

// send sends req over protocols and returns what raw returns.
func send(t *testing.T, protocols *http.Protocols, req *http.Request) (int, *replication.Error) {
	t.Helper()
	status, b := sendBody(t, protocols, req)
	var e replication.Error
	if json.Unmarshal(b, &e) != nil || e.Code == "" {
		return status, nil
	}
	return status, &e
}

func sendBody(t *testing.T, protocols *http.Protocols, req *http.Request) (int, []byte) {
	t.Helper()
	tr := &http.Transport{Protocols: protocols}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// sameRecords compares records field by field; a nil and an empty payload
// are the same payload (the frame cannot tell them apart).
func sameRecords(a, b []log.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Offset != b[i].Offset || a[i].Timestamp != b[i].Timestamp || !bytes.Equal(a[i].Payload, b[i].Payload) {
			return false
		}
	}
	return true
}

// samePayloads compares payload lists, nil and empty alike.
func samePayloads(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// asError returns err's *Error, failing the test when it has none.
func asError(t *testing.T, err error) *replication.Error {
	t.Helper()
	var e *replication.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	return e
}
