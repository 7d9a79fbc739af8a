package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// syncBuffer is a Stdout written by the command and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Fields(strings.ReplaceAll(s.b.String(), " ", "_"))
}

func entry(off uint64) apiclient.JournalEntry {
	return apiclient.JournalEntry{Offset: off, Time: "2024-12-02T09:20:00Z", Event: "broker-stop", Phase: "done", By: "operator",
		Broker: 1, Summary: fmt.Sprintf("entry %d", off)}
}

// journalServer answers GET /api/journal with entries 0 and 1, and
// events with the handler given.
func journalServer(t *testing.T, events http.HandlerFunc) *apiclient.Client {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/journal", func(w http.ResponseWriter, r *http.Request) {
		resp := apiclient.JournalResponse{Entries: []apiclient.JournalEntry{}, Next: 2}
		if r.URL.Query().Get("since") == "0" {
			resp.Entries = []apiclient.JournalEntry{entry(0), entry(1)}
		}
		_ = json.NewEncoder(w).Encode(resp)
	})
	if events != nil {
		mux.HandleFunc("GET /api/events", events)
	}
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return apiclient.New(hs.URL)
}

func sendEntry(w http.ResponseWriter, e apiclient.JournalEntry) {
	data, _ := json.Marshal(apiclient.Update{Time: e.Time, Journal: []apiclient.JournalEntry{e}})
	fmt.Fprintf(w, "id: %d\nevent: update\ndata: %s\n\n", e.Offset, data)
	w.(http.Flusher).Flush()
}

// cluster journal -f prints the journal so far, then follows the events
// stream; when the stream breaks (the server restarted) it reconnects with
// Last-Event-ID and prints what came after, nothing twice.
func TestCLIJournalFollowsTheStream(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	c := journalServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.RawQuery+"|"+r.Header.Get("Last-Event-ID"))
		n := len(asked)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			sendEntry(w, entry(2))
			return // the stream breaks
		}
		sendEntry(w, entry(3))
		<-r.Context().Done()
	})
	out := &syncBuffer{}
	a := &app{env: Env{Stdout: out}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.journal(ctx, c, 0, true) }()
	require.Eventually(t, func() bool { return len(out.lines()) == 4 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	for i, line := range out.lines() {
		require.True(t, strings.HasPrefix(line, fmt.Sprintf("%d_", i)), line)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"since=2|", "|2"}, asked, "from the journal's end, then resumed after entry 2")
}

// A server without the events stream (404) is asked every 200 ms instead.
func TestCLIJournalFollowPollsAnOlderServer(t *testing.T) {
	c := journalServer(t, nil)
	out := &syncBuffer{}
	a := &app{env: Env{Stdout: out}}
	ctx, cancel := context.WithTimeout(t.Context(), 600*time.Millisecond)
	defer cancel()
	require.NoError(t, a.journal(ctx, c, 0, true))
	require.Len(t, out.lines(), 2)
}

// A server that refuses the stream for now (503: as many streams as it
// serves, or shutting down) is asked again, said once on stderr, rather
// than ending the command.
func TestCLIJournalFollowRetriesUnavailable(t *testing.T) {
	var mu sync.Mutex
	refusals := 0
	c := journalServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		refusals++
		n := refusals
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"explorer: too many events streams open: 256, the most this server serves"}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sendEntry(w, entry(2))
		<-r.Context().Done()
	})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	a := &app{env: Env{Stdout: out, Stderr: errOut}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.journal(ctx, c, 0, true) }()
	require.Eventually(t, func() bool { return len(out.lines()) == 3 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	errOut.mu.Lock()
	defer errOut.mu.Unlock()
	require.Equal(t, 1, strings.Count(errOut.b.String(), "trying again"), errOut.b.String())
	require.Contains(t, errOut.b.String(), "too many events streams open")
}
