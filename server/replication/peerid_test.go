package replication_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pystream/pystream/server/replication"
)

// TestPeerRequiredFailsClosed pins the rule of
// docs/security.md § The internal port: on a port with mutual TLS (RequirePeer) a request
// without an authenticated peer is refused with CodeForbidden — every
// path, and ActsFor — never let through; with a peer, a node acts only
// for itself; without TLS nothing is checked.
func TestPeerRequiredFailsClosed(t *testing.T) {
	bg := context.Background()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string // the code of ActsFor(ctx, 2, ...), "" for none
	}{
		{"no TLS", bg, ""},
		{"TLS, the node itself", replication.WithPeer(replication.RequirePeer(bg), 2), ""},
		{"TLS, another node", replication.WithPeer(replication.RequirePeer(bg), 3), replication.CodeForbidden},
		{"TLS, no peer", replication.RequirePeer(bg), replication.CodeForbidden},
	} {
		if got := replication.CodeOf(replication.ActsFor(tc.ctx, 2, "heartbeat")); got != tc.want {
			t.Errorf("%s: ActsFor: code %q, want %q", tc.name, got, tc.want)
		}
	}

	p := &fakePeer{}
	h := replication.NewHandler(p, nil)
	hb, _ := json.Marshal(replication.Heartbeat{Node: 2})
	for _, path := range []string{replication.PathHeartbeat, replication.PathPropose, replication.PathRecords} {
		method := http.MethodPost
		if path == replication.PathRecords {
			method = http.MethodGet
		}
		req := httptest.NewRequest(method, path+"?topic=t&partition=0&from=0&max_bytes=1", bytes.NewReader(hb))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(replication.RequirePeer(req.Context())))
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s with TLS and no peer: status %d, want 403", path, rec.Code)
		}
	}
	if calls := p.Calls(); len(calls) != 0 {
		t.Errorf("requests without a peer reached the peer: %+v", calls)
	}
	// The same heartbeat with its node as the peer is answered.
	req := httptest.NewRequest(http.MethodPost, replication.PathHeartbeat, bytes.NewReader(hb))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(replication.WithPeer(replication.RequirePeer(req.Context()), 2)))
	if rec.Code != http.StatusOK {
		t.Errorf("node 2's own heartbeat: status %d, want 200: %s", rec.Code, rec.Body)
	}
}
