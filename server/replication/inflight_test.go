package replication_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/pystream/pystream/server/replication"
)

// blockingPeer takes payloads of at most 1 KiB (so that its body limit is
// small) and holds every Propose until release is closed.
type blockingPeer struct {
	fakePeer
	entered chan struct{}
	release chan struct{}
}

func (p *blockingPeer) MaxPayloadSize() int { return 1 << 10 }

func (p *blockingPeer) Propose(ctx context.Context, cmd []byte) ([]byte, error) {
	p.entered <- struct{}{}
	select {
	case <-p.release:
	case <-ctx.Done():
	}
	return []byte("{}"), nil
}

// docs/security.md § Bounds: the bodies the internal port holds at once
// are bounded by InflightLimit (bodiesInFlight bodies of the largest
// size, derived from the brokers' payload limit): with four largest
// bodies in flight a fifth is refused unread with ErrBusy — 503,
// CodeUnavailable, which the sender retries — and once they are answered
// the node serves again.
func TestReplicationInflightBodies(t *testing.T) {
	p := &blockingPeer{entered: make(chan struct{}), release: make(chan struct{})}
	n := serve(t, p)
	limit := replication.BodyLimit(p.MaxPayloadSize())
	if got := replication.InflightLimit(p.MaxPayloadSize()); got != 4*limit {
		t.Fatalf("InflightLimit = %d, want 4 × BodyLimit %d", got, limit)
	}
	body := bytes.Repeat([]byte("x"), int(limit))
	propose := func() *http.Request {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+n.Addr+replication.PathPropose, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	var http1 http.Protocols
	http1.SetHTTP1(true)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if status, _ := sendBody(t, &http1, propose()); status != http.StatusOK {
				t.Errorf("a body within the budget: status %d", status)
			}
		})
		<-p.entered
	}
	status, e := send(t, &http1, propose())
	if status != http.StatusServiceUnavailable || e == nil || !errors.Is(replication.DecodeError(e), replication.ErrBusy) {
		t.Errorf("a fifth body: status %d, refusal %+v; want 503 %v", status, e, replication.ErrBusy)
	}
	close(p.release)
	wg.Wait()
	go func() { <-p.entered }()
	if status, _ := sendBody(t, &http1, propose()); status != http.StatusOK {
		t.Errorf("after the bodies in flight were answered: status %d", status)
	}
}
