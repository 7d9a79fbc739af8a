package explorer

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// The first message carries the whole state; journal entries arrive in
// journal order, each message's id the offset of its last entry; a client
// that reconnects with that id as Last-Event-ID gets the entries after it,
// none twice and none missed.
func TestEventsOrderAndResume(t *testing.T) {
	src := &fakeSource{}
	src.setBrokers(3)
	src.add(10)
	_, c, _ := serve(t, src, Config{})

	got, last := collect(t, c, apiclient.EventsOptions{Since: u64(0)}, 5*time.Second, func(us []apiclient.Update) bool {
		if len(offsets(us)) == 10 {
			src.add(5) // written while the client is connected
		}
		return len(offsets(us)) >= 15
	})
	require.NotNil(t, got[0].Cluster, "the first message has the state")
	require.Len(t, got[0].Cluster.Brokers, 3)
	require.Equal(t, upTo(15), offsets(got))
	require.NotNil(t, last)
	require.Equal(t, uint64(14), *last)

	src.add(5) // written while the client is away
	again, last := collect(t, c, apiclient.EventsOptions{LastEventID: last}, 5*time.Second, func(us []apiclient.Update) bool {
		return len(offsets(us)) >= 5
	})
	require.Equal(t, upTo(20)[15:], offsets(again))
	require.Equal(t, uint64(19), *last)
	require.NotNil(t, again[0].Cluster, "a resumed stream starts with the whole state too")

	// Without since or Last-Event-ID: only what is written from now on;
	// tail asks for the most recent entries.
	fresh, _ := collect(t, c, apiclient.EventsOptions{}, 5*time.Second, func(us []apiclient.Update) bool {
		if len(us) == 1 {
			require.Empty(t, us[0].Journal)
			src.add(1)
		}
		return len(offsets(us)) >= 1
	})
	require.Equal(t, []uint64{20}, offsets(fresh))
}

// However fast the cluster changes, a client gets at most one message per
// MinGap: a state that changes on every poll (every 2 ms) and a burst of
// 2,000 journal entries reach it in at most 10 messages a second, the
// entries all there, in order.
func TestEventsCoalesced(t *testing.T) {
	src := &fakeSource{churn: true}
	_, c, _ := serve(t, src, Config{Interval: 2 * time.Millisecond, MinGap: 100 * time.Millisecond, MaxEntries: 500})
	src.add(2000)
	start := time.Now()
	got, _ := collect(t, c, apiclient.EventsOptions{Since: u64(0)}, 5*time.Second, func(us []apiclient.Update) bool {
		return time.Since(start) > time.Second
	})
	require.Equal(t, upTo(2000), offsets(got))
	require.LessOrEqual(t, len(got), 11, "ten a second, and the one that ends the second")
	require.GreaterOrEqual(t, len(got), 5, "the state changed all along")
	// The gap is the server's: each message says when it was sent (the
	// client's own clock would see a late delivery bunch up with the next).
	for i := 1; i < len(got); i++ {
		prev, err := time.Parse(time.RFC3339Nano, got[i-1].Time)
		require.NoError(t, err)
		at, err := time.Parse(time.RFC3339Nano, got[i].Time)
		require.NoError(t, err)
		require.GreaterOrEqual(t, at.Sub(prev), 100*time.Millisecond, "message %d", i)
	}
	require.NotNil(t, got[len(got)-1].Cluster, "a changing state is in every message")
}

// A client that never reads fills the connection's buffers; its write
// then makes no progress, and after WriteStall the stream is ended and
// the drop logged, while a client that reads goes on. The server keeps
// no queue for it: what it holds is one message being written.
func TestEventsSlowClientDropped(t *testing.T) {
	var logs lockedBuffer
	src := &fakeSource{churn: true, pad: strings.Repeat("x", 256<<10)}
	e, c, base := serve(t, src, Config{Interval: 2 * time.Millisecond, MinGap: 10 * time.Millisecond,
		WriteStall: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	conn, err := (&net.Dialer{Control: smallReceiveBuffer}).Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	require.NoError(t, err) // and never read a byte
	require.Eventually(t, func() bool { return e.Clients() == 1 }, 5*time.Second, time.Millisecond)

	readerDone := make(chan int)
	go func() {
		got, _ := collect(t, c, apiclient.EventsOptions{}, 20*time.Second, func(us []apiclient.Update) bool {
			return contains(logs.String(), "client dropped") && len(us) > 3
		})
		readerDone <- len(got)
	}()
	require.Eventually(t, func() bool { return contains(logs.String(), "explorer: events client dropped") }, 15*time.Second, 10*time.Millisecond)
	require.Greater(t, <-readerDone, 3, "the reading client was served all along")
	require.Eventually(t, func() bool { return e.Clients() == 0 }, 5*time.Second, time.Millisecond)
}

// Many clients share one poller: 50 streams get the state and every
// change, and the state is read about once per Interval, not once per
// client. Beyond MaxClients a stream is refused with 503.
func TestEventsManyClients(t *testing.T) {
	const n = 50
	src := &fakeSource{}
	src.setBrokers(3)
	e, c, base := serve(t, src, Config{Interval: 20 * time.Millisecond, MaxClients: n, MaxPerPrincipal: n})

	var wg sync.WaitGroup
	ready := make(chan struct{}, n)
	results := make(chan []uint64, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, _ := collect(t, c, apiclient.EventsOptions{}, 10*time.Second, func(us []apiclient.Update) bool {
				if len(us) == 1 {
					ready <- struct{}{}
				}
				return len(offsets(us)) >= 3
			})
			results <- offsets(got)
		}()
	}
	for range n {
		<-ready
	}
	resp, err := http.Get(base + "/api/events")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), `"code":"unavailable"`)

	before, start := src.stateCalls(), time.Now()
	src.add(3)
	wg.Wait()
	close(results)
	for got := range results {
		require.Equal(t, upTo(3), got)
	}
	polls := src.stateCalls() - before
	require.LessOrEqual(t, polls, int(time.Since(start)/(20*time.Millisecond))+3, "one poller, not one per client")
	require.Eventually(t, func() bool { return e.Clients() == 0 }, 5*time.Second, time.Millisecond)
}

// EndStreams ends every open stream (a server shutting down), and Close
// refuses new ones; the poller stops with the last stream.
func TestEventsEndOnShutdown(t *testing.T) {
	src := &fakeSource{}
	e, c, base := serve(t, src, Config{})
	done := make(chan error, 1)
	go func() {
		_, err := c.Events(t.Context(), apiclient.EventsOptions{}, func(apiclient.Update) error { return nil })
		done <- err
	}()
	require.Eventually(t, func() bool { return e.Clients() == 1 }, 5*time.Second, time.Millisecond)
	e.EndStreams()
	require.ErrorIs(t, <-done, apiclient.ErrStreamEnded)
	e.Close()
	resp, err := http.Get(base + "/api/events")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

// Malformed requests are refused with 400 and open no stream; HEAD
// answers the stream's headers alone.
func TestEventsBadRequest(t *testing.T) {
	src := &fakeSource{}
	_, _, base := serve(t, src, Config{})
	for _, tc := range []struct{ query, lastID string }{
		{"?since=x", ""}, {"?tail=1001", ""}, {"?since=1&tail=1", ""}, {"?from=1", ""}, {"", "abc"}, {"", "-1"},
	} {
		req, err := http.NewRequest(http.MethodGet, base+"/api/events"+tc.query, nil)
		require.NoError(t, err)
		if tc.lastID != "" {
			req.Header.Set("Last-Event-ID", tc.lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%+v", tc)
	}
	resp, err := http.Head(base + "/api/events")
	require.NoError(t, err)
	body, _ := io.ReadAll(bufio.NewReader(resp.Body))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	require.Empty(t, body)
}
