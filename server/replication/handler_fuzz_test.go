package replication_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/replication"
)

// The fuzz targets of the internal API's request decoders (handler.go):
// one per route, each over an arbitrary query string and body, sent
// straight to NewHandler's http.Handler (no http.Server, so that a panic
// is the fuzzer's to see rather than the server's to recover) by node
// fuzzPeerID, as mutual TLS would have proved it (WithPeer). The peer
// accepts every request that reaches it, so every refusal is the
// decoder's. Each target checks handler.go's promise: it never panics;
// malformed requests are refused with a 4xx answer whose body is a typed
// refusal — CodeBadRequest (400), or CodeForbidden (403) for a request
// that acts for another node than the peer — and never reach the peer;
// no request is answered 5xx; and what does reach the peer is well formed
// (checkReached). Seeds: testdata/fuzz/FuzzHandler<Route>.

// fuzzPeerID is the authenticated peer of every fuzzed request.
const fuzzPeerID = 1

// fuzzRoute fuzzes one route of the internal API.
func fuzzRoute(f *testing.F, method, path string) {
	f.Fuzz(func(t *testing.T, query string, body []byte) {
		p := &fakePeer{}
		h := replication.NewHandler(p, nil)
		r := &http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: query}, Proto: "HTTP/2.0", ProtoMajor: 2,
			Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Host: "node-2"}
		r = r.WithContext(replication.WithPeer(context.Background(), fuzzPeerID))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)

		calls := p.Calls()
		switch status := w.Code; {
		case status == http.StatusOK:
			if len(calls) != 1 {
				t.Fatalf("answered 200 with %d calls to the peer, want 1", len(calls))
			}
			checkReached(t, calls[0].Req)
		case status >= 500:
			t.Fatalf("query %q, %d-byte body: answered %d: %s", query, len(body), status, w.Body.Bytes())
		case status >= 400:
			var e replication.Error
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
				t.Fatalf("answered %d with no refusal: %q (%v)", status, w.Body.Bytes(), err)
			}
			want := map[string]int{replication.CodeBadRequest: http.StatusBadRequest, replication.CodeForbidden: http.StatusForbidden}
			if want[e.Code] != status || e.Message == "" {
				t.Fatalf("answered %d with refusal %+v", status, e)
			}
			if len(calls) != 0 {
				t.Fatalf("refused with %s, yet the peer saw %+v", e.Code, calls)
			}
		default:
			t.Fatalf("answered %d", status)
		}
	})
}

// checkReached checks a request that reached the peer: the bounds the
// handler promises (handler.go's query, replicate's consecutive records,
// digests' chunks), and that it acts only for the authenticated peer.
func checkReached(t *testing.T, req any) {
	t.Helper()
	partition := func(p int) {
		if p < 0 || p > math.MaxInt32 {
			t.Fatalf("partition %d reached the peer", p)
		}
	}
	topic := func(name string) {
		if name == "" {
			t.Fatalf("an empty topic name reached the peer")
		}
	}
	switch r := req.(type) {
	case cluster.ReplicateRequest:
		topic(r.Topic)
		partition(r.Partition)
		if r.Leader != fuzzPeerID {
			t.Fatalf("node %d replicated as leader %d", fuzzPeerID, r.Leader)
		}
		if !cluster.Consecutive(r.Records) {
			t.Fatalf("records that are not consecutive reached the peer")
		}
		if err := cluster.ValidateEpochRuns(r.Runs); err != nil {
			t.Fatalf("runs that are no history reached the peer: %v", err)
		}
	case cluster.RecordsRequest:
		topic(r.Topic)
		partition(r.Partition)
		if r.MaxBytes < 0 || r.MaxRecords < 0 {
			t.Fatalf("max_bytes %d, max_records %d reached the peer", r.MaxBytes, r.MaxRecords)
		}
	case cluster.DigestsRequest:
		topic(r.Topic)
		partition(r.Partition)
		if r.Chunk < 1 || r.To < r.From {
			t.Fatalf("digests of [%d, %d) in chunks of %d reached the peer", r.From, r.To, r.Chunk)
		}
		if n, size := r.To-r.From, uint64(r.Chunk); n/size+min(n%size, 1) > 4096 {
			t.Fatalf("digests of [%d, %d) in chunks of %d reached the peer", r.From, r.To, r.Chunk)
		}
	case cluster.ProduceRequest:
		topic(r.Topic)
		partition(r.Partition)
	case cluster.OffsetForTimeRequest:
		topic(r.Topic)
		partition(r.Partition)
		if r.Timestamp < 0 {
			t.Fatalf("timestamp %d reached the peer", r.Timestamp)
		}
	case cluster.CutRequest:
		if r.Leader != fuzzPeerID {
			t.Fatalf("node %d cut as leader %d", fuzzPeerID, r.Leader)
		}
	case replication.Heartbeat:
		if r.Node != fuzzPeerID {
			t.Fatalf("node %d heartbeat as node %d", fuzzPeerID, r.Node)
		}
	case cluster.OperateRequest, replication.MembershipRequest, []byte:
		// JSON the handler decoded as it is: the peer refuses what it
		// cannot do (its own tests).
	default:
		t.Fatalf("the peer received a %T", req)
	}
}

// FuzzHandlerReplicate: POST /v1/replicate, a query of ten parameters and
// a body of frames with consecutive offsets, sent by its leader.
func FuzzHandlerReplicate(f *testing.F) {
	fuzzRoute(f, http.MethodPost, replication.PathReplicate)
}

// FuzzHandlerRecords: GET /v1/records, a query of six parameters.
func FuzzHandlerRecords(f *testing.F) { fuzzRoute(f, http.MethodGet, replication.PathRecords) }

// FuzzHandlerDigests: GET /v1/digests, a query of five parameters and the
// bound on its chunks.
func FuzzHandlerDigests(f *testing.F) { fuzzRoute(f, http.MethodGet, replication.PathDigests) }

// FuzzHandlerCut: POST /v1/cut, a JSON cluster.CutRequest sent by its
// leader.
func FuzzHandlerCut(f *testing.F) { fuzzRoute(f, http.MethodPost, replication.PathCut) }

// FuzzHandlerProduce: POST /v1/produce, a forwarded write: a query of two
// parameters and a body of frames.
func FuzzHandlerProduce(f *testing.F) { fuzzRoute(f, http.MethodPost, replication.PathProduce) }

// FuzzHandlerOffsetForTime: GET /v1/offset-for-time, a query of three
// parameters.
func FuzzHandlerOffsetForTime(f *testing.F) {
	fuzzRoute(f, http.MethodGet, replication.PathOffsetTime)
}

// FuzzHandlerOperate: POST /v1/operate, a forwarded operation, a JSON
// cluster.OperateRequest.
func FuzzHandlerOperate(f *testing.F) { fuzzRoute(f, http.MethodPost, replication.PathOperate) }

// FuzzHandlerPropose: POST /v1/propose, a forwarded metadata command (a
// registration among them), handed to the peer as it is: only its size is
// the handler's to check (the peer's checkProposer and Raft's state machine
// parse it; clusternode's FuzzCheckProposer).
func FuzzHandlerPropose(f *testing.F) { fuzzRoute(f, http.MethodPost, replication.PathPropose) }

// FuzzHandlerHeartbeat: POST /v1/heartbeat, a JSON Heartbeat sent by its
// broker.
func FuzzHandlerHeartbeat(f *testing.F) {
	fuzzRoute(f, http.MethodPost, replication.PathHeartbeat)
}

// FuzzHandlerMembership: POST /v1/membership, a JSON MembershipRequest.
func FuzzHandlerMembership(f *testing.F) {
	fuzzRoute(f, http.MethodPost, replication.PathMembership)
}
