package explorer

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// fakeSource is a Source whose state and journal a test sets. It counts
// State calls, to show that one poller serves every stream.
type fakeSource struct {
	mu      sync.Mutex
	state   apiclient.ClusterState
	journal []apiclient.JournalEntry
	states  int
	// churn makes every State call a new state.
	churn bool
	// pad is added to every state's mode, to make messages large.
	pad string
	// fail, when set, fails every State call.
	fail error
}

func (f *fakeSource) State() (apiclient.ClusterState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states++
	if f.fail != nil {
		return apiclient.ClusterState{}, f.fail
	}
	st := f.state
	if f.churn {
		st.Brokers = []apiclient.BrokerStatus{{ID: f.states, Available: true}}
	}
	st.Mode += f.pad
	return st, nil
}

func (f *fakeSource) Journal(since uint64, max int) ([]apiclient.JournalEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiclient.JournalEntry
	for _, e := range f.journal {
		if e.Offset >= since && len(out) < max {
			out = append(out, e)
		}
	}
	return out, nil
}

func (f *fakeSource) JournalEnd() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return uint64(len(f.journal)), nil
}

// add appends n entries to the journal.
func (f *fakeSource) add(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		off := uint64(len(f.journal))
		f.journal = append(f.journal, apiclient.JournalEntry{Offset: off, Event: "broker-stop", Phase: "done", By: "operator",
			Broker: 1, Summary: "broker 1 stopped"})
	}
}

func (f *fakeSource) setBrokers(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state.Mode = "embedded"
	f.state.Brokers = nil
	for id := 1; id <= n; id++ {
		f.state.Brokers = append(f.state.Brokers, apiclient.BrokerStatus{ID: id, Available: true})
	}
}

func (f *fakeSource) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *fakeSource) stateCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.states
}

// lockedBuffer is a log destination for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve starts an explorer over src on a loopback httptest server; cfg's
// zero fields take fast test values.
func serve(t *testing.T, src Source, cfg Config) (*Explorer, *apiclient.Client, string) {
	t.Helper()
	cfg.Source = src
	if cfg.Interval == 0 {
		cfg.Interval = 5 * time.Millisecond
	}
	e, err := New(cfg)
	require.NoError(t, err)
	hs := httptest.NewServer(http.HandlerFunc(e.ServeEvents))
	t.Cleanup(func() {
		e.Close()
		hs.Close()
	})
	return e, apiclient.New(hs.URL, apiclient.WithHTTPClient(hs.Client())), hs.URL
}

// collect reads the stream until until says stop, or the timeout.
func collect(t *testing.T, c *apiclient.Client, opts apiclient.EventsOptions, timeout time.Duration,
	until func([]apiclient.Update) bool) ([]apiclient.Update, *uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var got []apiclient.Update
	stop := errors.New("enough")
	last, err := c.Events(ctx, opts, func(u apiclient.Update) error {
		got = append(got, u)
		if until(got) {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("stream ended before the test saw what it waited for (%v); got %d messages", err, len(got))
	}
	return got, last
}

// offsets lists the journal offsets of updates, in order.
func offsets(us []apiclient.Update) []uint64 {
	var out []uint64
	for _, u := range us {
		for _, e := range u.Journal {
			out = append(out, e.Offset)
		}
	}
	return out
}

func upTo(n uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i)
	}
	return out
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func u64(v uint64) *uint64 { return &v }
