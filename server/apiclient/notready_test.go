package apiclient_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// TestAPIClientRetriesNotReady: a node replaying its metadata after a
// start answers 503 not_ready; the client asks again a little later, a
// bounded number of times, and gives the answer once the node has one —
// or the not_ready error when it never does.
func TestAPIClientRetriesNotReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls, ready atomic.Int32
		ready.Store(3)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			if calls.Add(1) < ready.Load() {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, `{"error":{"code":"not_ready","message":"replaying"}}`)
				return
			}
			_, _ = io.WriteString(w, `{"consumer_id":"billing","offsets":[{"topic":"orders","partition":0,"offset":7}]}`)
		}))
		srv.Listener = newPipeListener()
		srv.Start()
		t.Cleanup(srv.Close)
		c := apiclient.New("http://pipe/", apiclient.WithHTTPClient(&http.Client{Transport: &http.Transport{DialContext: srv.Listener.(*pipeListener).dial}}))
		res, err := c.ConsumerOffsets(context.Background(), "billing")
		require.NoError(t, err)
		require.Equal(t, uint64(7), res.Offsets[0].Offset)
		require.Equal(t, int32(3), calls.Load(), "two not_ready answers, then the answer")

		calls.Store(0)
		ready.Store(1000)
		_, err = c.ConsumerOffsets(context.Background(), "billing")
		var e *apiclient.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, apiclient.CodeNotReady, e.Code)
		require.Equal(t, int32(20), calls.Load(), "bounded")
	})
}

// pipeListener is a listener of in-memory connections (net.Pipe), so that
// a server and its client run inside a synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	a, b := net.Pipe()
	select {
	case l.conns <- b:
		return a, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
