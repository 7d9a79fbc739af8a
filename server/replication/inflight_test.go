package replication_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pystream/pystream/server/replication"
)

// blockingPeer takes payloads of at most 2 KiB (so that its body limit is
// small) and holds every Propose, with its body, until release is closed
// or the request ends. entered has room for every Propose of a test, so
// that one reaching the peer never blocks there.
type blockingPeer struct {
	fakePeer
	entered chan struct{}
	release chan struct{}
}

func (p *blockingPeer) MaxPayloadSize() int { return 2 << 10 }

func (p *blockingPeer) Propose(ctx context.Context, cmd []byte) ([]byte, error) {
	p.entered <- struct{}{}
	select {
	case <-p.release:
	case <-ctx.Done():
	}
	runtime.KeepAlive(cmd) // held as a peer applying it would
	return []byte("{}"), nil
}

// heap is the live heap after a collection, and all bytes allocated so
// far. Two collections: the first leaves sync.Pool's victims alive.
func heap() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// heapSlack is what the heap may move by for reasons other than bodies:
// connections' buffers, the transports of the test's requests, the
// runtime's own bookkeeping.
const heapSlack = 512 << 10

// overBudget is how many bodies the test sends while the budget is full.
const overBudget = 32

// docs/security.md § Bounds: the bodies the internal port holds at once
// are bounded by InflightLimit (bodiesInFlight bodies of the largest
// size, derived from the brokers' payload limit): with four largest
// bodies in flight, every further body is refused unread with ErrBusy —
// 503, CodeUnavailable, which the sender retries — and never reaches the
// peer; once the four are answered the node serves again.
//
// Memory is measured after a collection: before the four (baseline);
// with the four held and overBudget more bodies sent at once over
// connections still open, the heap in use stays within twice the budget
// (io.ReadAll's growth) plus heapSlack of the baseline, and the refused
// bodies allocate together less than half their bytes (reading a body
// allocates at least its size); after all are answered the heap is back
// within heapSlack of the baseline.
func TestReplicationInflightBodies(t *testing.T) {
	p := &blockingPeer{entered: make(chan struct{}, 4+overBudget+1), release: make(chan struct{})}
	n := serve(t, p)
	limit := replication.BodyLimit(p.MaxPayloadSize())
	budget := 4 * limit // the bound docs/security.md states: four largest bodies
	if got := replication.InflightLimit(p.MaxPayloadSize()); got != budget {
		t.Errorf("InflightLimit = %d, want 4 × BodyLimit %d", got, limit)
	}
	body := bytes.Repeat([]byte("x"), int(limit))
	// Every request of the test ends within 15 seconds, answered or not.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	propose := func() *http.Request {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+n.Addr+replication.PathPropose, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	var http1 http.Protocols
	http1.SetHTTP1(true)

	before := heap()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if status, _ := sendBody(t, &http1, propose()); status != http.StatusOK {
				t.Errorf("a body within the budget: status %d", status)
			}
		})
		select {
		case <-p.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("a body within the budget never reached the peer")
		}
	}

	// The budget is full: further bodies, written by hand from the one
	// buffer so that what the process allocates meanwhile is the
	// server's, each over a connection of its own kept open until the
	// heap is measured (a body let in stays held by the peer). Each waits
	// at most five seconds for its answer: a bound that let them in fails
	// the test, not hangs it.
	held := heap()
	head := []byte(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", replication.PathPropose, n.Addr, len(body)))
	statuses := make([]int, overBudget)
	errs := make([]error, overBudget)
	hold := make(chan struct{})
	var answered, closed sync.WaitGroup
	for i := range overBudget {
		answered.Add(1)
		closed.Go(func() {
			statuses[i], errs[i] = postRaw(n.Addr, head, body, answered.Done, hold)
		})
	}
	answered.Wait()
	during := heap()
	close(hold)
	closed.Wait()
	for i := range overBudget {
		if errs[i] != nil || statuses[i] != http.StatusServiceUnavailable {
			t.Errorf("body %d over the budget: status %d, %v; want 503", i, statuses[i], errs[i])
		}
	}
	if reached := len(p.entered); reached != 0 {
		t.Errorf("%d bodies over the budget reached the peer", reached)
	}
	allocated := during.TotalAlloc - held.TotalAlloc
	if most := uint64(overBudget * limit / 2); allocated > most {
		t.Errorf("%d bodies over the budget allocated %d bytes, more than %d: they were read", overBudget, allocated, most)
	}
	grown := int64(during.HeapInuse) - int64(before.HeapInuse)
	if most := 2*budget + heapSlack; grown > most {
		t.Errorf("with the budget full the heap grew by %d bytes, more than %d (2 × budget %d + %d)", grown, most, budget, heapSlack)
	}
	t.Logf("budget %d bytes (4 × %d); heap in use: before %d, four held %d, with %d more sent %d; %d bytes allocated while they were sent",
		budget, limit, before.HeapInuse, held.HeapInuse, overBudget, during.HeapInuse, allocated)

	status, e := send(t, &http1, propose())
	if status != http.StatusServiceUnavailable || e == nil || !errors.Is(replication.DecodeError(e), replication.ErrBusy) {
		t.Errorf("a body over the budget: status %d, refusal %+v; want 503 %v", status, e, replication.ErrBusy)
	}

	close(p.release)
	wg.Wait()
	if status, _ := sendBody(t, &http1, propose()); status != http.StatusOK {
		t.Errorf("after the bodies in flight were answered: status %d", status)
	}
	after := heap()
	if left := int64(after.HeapInuse) - int64(before.HeapInuse); left > heapSlack {
		t.Errorf("after the bodies were answered the heap is %d bytes above where it began, more than %d", left, heapSlack)
	}
	t.Logf("heap in use after: %d", after.HeapInuse)
}

// postRaw writes a request of head and body on a connection of its own to
// addr, reads the answer's status (five seconds at most), calls answered,
// and closes the connection once hold is closed.
func postRaw(addr string, head, body []byte, answered func(), hold <-chan struct{}) (int, error) {
	status, nc, err := func() (int, net.Conn, error) {
		defer answered()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			return 0, nil, err
		}
		if err := nc.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
			return 0, nc, err
		}
		if _, err := nc.Write(head); err != nil {
			return 0, nc, err
		}
		if _, err := nc.Write(body); err != nil {
			return 0, nc, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			return 0, nc, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode, nc, err
	}()
	<-hold
	if nc != nil {
		_ = nc.Close()
	}
	return status, err
}
