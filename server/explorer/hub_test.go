package explorer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// A message's data is an apiclient.Update, byte for byte as json.Marshal
// encodes one — the state, encoded once by the poller, and the journal
// written into it — so that the stream and its clients share one shape,
// apiclient's.
func TestEventsMessageShape(t *testing.T) {
	st := apiclient.ClusterState{Mode: apiclient.ModeEmbedded, Brokers: []apiclient.BrokerStatus{{ID: 1, Available: true}},
		Topics: []apiclient.TopicState{}, Consumers: []apiclient.ConsumerPosition{}, Groups: []apiclient.GroupDescription{}}
	state, err := json.Marshal(st)
	require.NoError(t, err)
	p := 0
	journal := []apiclient.JournalEntry{{Offset: 4, Time: "2026-12-03T16:15:30Z", Event: "failover", Phase: "intent", By: "controller",
		Topic: "orders", Partition: &p, Broker: 1, Summary: "s\nwith a newline", Candidates: []apiclient.JournalCandidate{{Broker: 2, LogEnd: 3}}}}
	const at = "2026-12-03T16:15:30.01171494Z"
	for name, tc := range map[string]struct {
		state   []byte
		journal []apiclient.JournalEntry
		want    apiclient.Update
	}{
		"state and journal": {state, journal, apiclient.Update{Time: at, Cluster: &st, Journal: journal}},
		"state alone":       {state, nil, apiclient.Update{Time: at, Cluster: &st}},
		"journal alone":     {nil, journal, apiclient.Update{Time: at, Journal: journal}},
	} {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		require.NoError(t, writeUpdate(w, at, tc.state, tc.journal), name)
		require.NoError(t, w.Flush())
		want, err := json.Marshal(tc.want)
		require.NoError(t, err)
		require.Equal(t, string(want), buf.String(), name)
		require.NotContains(t, buf.String(), "\n", "%s: one data line", name)
		dec := json.NewDecoder(&buf)
		dec.DisallowUnknownFields()
		var got apiclient.Update
		require.NoError(t, dec.Decode(&got), name)
		require.Equal(t, tc.want, got, name)
	}
}

// A server that ends its streams (EndStreamsOf, from its shutdown) ends
// them all and refuses every stream it opens afterwards, so that a
// request racing the shutdown cannot open a stream nothing would end;
// another server's streams on the same explorer go on and open as usual.
func TestEventsEndStreamsOfIsSticky(t *testing.T) {
	src := &fakeSource{}
	src.setBrokers(1)
	e, err := New(Config{Source: src, Interval: 5 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(e.Close)
	a := httptest.NewServer(http.HandlerFunc(e.ServeEvents))
	b := httptest.NewServer(http.HandlerFunc(e.ServeEvents))
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	ca, cb := apiclient.New(a.URL, apiclient.WithHTTPClient(a.Client())), apiclient.New(b.URL, apiclient.WithHTTPClient(b.Client()))

	// Streams open on both, while more requests keep arriving at a.
	const racers = 20
	var wg sync.WaitGroup
	ended := make(chan error, racers+1)
	follow := func(c *apiclient.Client) {
		defer wg.Done()
		_, err := c.Events(t.Context(), apiclient.EventsOptions{}, func(apiclient.Update) error { return nil })
		ended <- err
	}
	wg.Add(1)
	go follow(ca)
	require.Eventually(t, func() bool { return e.Clients() == 1 }, 5*time.Second, time.Millisecond)
	bDone := make(chan error, 1)
	go func() {
		_, err := cb.Events(t.Context(), apiclient.EventsOptions{}, func(apiclient.Update) error { return nil })
		bDone <- err
	}()
	require.Eventually(t, func() bool { return e.Clients() == 2 }, 5*time.Second, time.Millisecond)
	for range racers {
		wg.Add(1)
		go follow(ca)
	}
	e.EndStreamsOf(a.Config)
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select { // every stream of a ends, whether it opened before the end or raced it
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatalf("a stream of a outlives its server's end: %d open", e.Clients())
	}
	close(ended)
	for err := range ended {
		var ae *apiclient.Error
		if !errors.Is(err, apiclient.ErrStreamEnded) {
			require.ErrorAs(t, err, &ae, "a stream of a is ended or refused")
			require.Equal(t, http.StatusServiceUnavailable, ae.Status)
		}
	}
	require.Equal(t, 1, e.Clients(), "b's stream goes on")
	_, err = ca.Events(t.Context(), apiclient.EventsOptions{}, func(apiclient.Update) error { return nil })
	require.ErrorIs(t, err, apiclient.ErrUnavailable, "a opens no stream once it ended them")
	second := make(chan struct{})
	go func() {
		_, _ = cb.Events(t.Context(), apiclient.EventsOptions{}, func(apiclient.Update) error { close(second); return errors.New("seen") })
	}()
	select {
	case <-second:
	case <-time.After(5 * time.Second):
		t.Fatal("b opens streams as usual")
	}
	e.EndStreams()
	require.ErrorIs(t, <-bDone, apiclient.ErrStreamEnded)
}

// A read of the state that keeps failing is logged once, not at every
// poll, and its recovery once; the streams keep the last state read.
func TestEventsFailedReadLoggedOnChange(t *testing.T) {
	var logs lockedBuffer
	src := &fakeSource{}
	src.setBrokers(1)
	e, c, _ := serve(t, src, Config{Interval: 2 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.Events(t.Context(), apiclient.EventsOptions{}, func(apiclient.Update) error { return nil })
	}()
	require.Eventually(t, func() bool { return e.Clients() == 1 }, 5*time.Second, time.Millisecond)
	src.setFail(errors.New("disk on fire"))
	before := src.stateCalls()
	require.Eventually(t, func() bool { return src.stateCalls() >= before+20 }, 5*time.Second, time.Millisecond, "twenty failed polls")
	require.Equal(t, 1, strings.Count(logs.String(), "reading the cluster's state failed"), logs.String())
	src.setFail(errors.New("disk still on fire, differently"))
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "reading the cluster's state failed") == 2 },
		5*time.Second, time.Millisecond, "a different failure is logged")
	src.setFail(nil)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "reading the cluster's state works again") },
		5*time.Second, time.Millisecond)
	before = src.stateCalls()
	require.Eventually(t, func() bool { return src.stateCalls() >= before+10 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 1, strings.Count(logs.String(), "state works again"))
	require.Equal(t, 2, strings.Count(logs.String(), "level=WARN"), logs.String())
	e.EndStreams()
	<-done
}

// The one poller stops when the last stream leaves: an idle explorer
// reads nothing.
func TestEventsPollerStopsWhenIdle(t *testing.T) {
	src := &fakeSource{}
	src.setBrokers(1)
	const interval = 2 * time.Millisecond
	e, c, _ := serve(t, src, Config{Interval: interval})
	collect(t, c, apiclient.EventsOptions{}, 5*time.Second, func(us []apiclient.Update) bool { return len(us) == 1 })
	require.Eventually(t, func() bool { return e.Clients() == 0 }, 5*time.Second, time.Millisecond)
	e.mu.Lock()
	stopped := e.pollDone
	e.mu.Unlock()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the poller still runs with no stream open")
	}
	idle := src.stateCalls()
	time.Sleep(25 * interval)
	require.Equal(t, idle, src.stateCalls(), "no state read while no stream is open")
}

// The poller reads at once when a partition advanced (Config.Advanced):
// with an Interval that never comes, the new state reaches the stream
// only through the wake-up. Wake-ups within MinGap of the last poll read
// nothing more.
func TestEventsAdvancedWakesThePoller(t *testing.T) {
	src := &fakeSource{}
	src.setBrokers(1)
	advanced := make(chan struct{}, 1)
	e, c, _ := serve(t, src, Config{Interval: time.Hour, MinGap: time.Millisecond, Advanced: advanced})
	seen := make(chan int, 16)
	go func() {
		collect(t, c, apiclient.EventsOptions{}, 10*time.Second, func(us []apiclient.Update) bool {
			last := us[len(us)-1]
			if last.Cluster != nil {
				seen <- len(last.Cluster.Brokers)
			}
			return last.Cluster != nil && len(last.Cluster.Brokers) == 2
		})
	}()
	require.Equal(t, 1, <-seen)
	src.setBrokers(2)
	advanced <- struct{}{}
	select {
	case n := <-seen:
		require.Equal(t, 2, n)
	case <-time.After(5 * time.Second):
		t.Fatal("the advance did not wake the poller")
	}
	require.Eventually(t, func() bool { return e.Clients() == 0 }, 5*time.Second, time.Millisecond)

	// A poller whose last poll was just now waits MinGap before it
	// answers a wake-up, however many come.
	src2 := &fakeSource{}
	src2.setBrokers(1)
	advanced2 := make(chan struct{}, 1)
	e2, c2, _ := serve(t, src2, Config{Interval: time.Hour, MinGap: time.Hour, Advanced: advanced2})
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan struct{}, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = c2.Events(ctx, apiclient.EventsOptions{}, func(apiclient.Update) error {
			select {
			case first <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	<-first
	polls := src2.stateCalls()
	for range 5 {
		select {
		case advanced2 <- struct{}{}:
		case <-time.After(time.Second):
			t.Fatal("the poller does not take wake-ups")
		}
	}
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, polls, src2.stateCalls(), "no poll within MinGap of the last")
	require.Equal(t, 1, e2.Clients())
	cancel()
	<-ended
}
