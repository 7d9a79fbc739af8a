package apiclient_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// scriptedProducerServer hands out producer id 7 and answers each produce
// request with the next of answers (status, Retry-After, body), recording
// the sequence number each carried; past the script, 200.
type scriptedProducerServer struct {
	mu      sync.Mutex
	answers []scripted
	seqs    []int32
	// slow is how long the next produce answer takes; reset after it.
	slow time.Duration
}

type scripted struct {
	status     int
	retryAfter string
	body       string
}

func (s *scriptedProducerServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/api/producers" {
		_, _ = io.WriteString(w, `{"producer_id":7,"epoch":0}`)
		return
	}
	var req apiclient.ProduceRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Producer == nil || req.Producer.ID != 7 || r.URL.Query().Get("partition") == "" {
		w.WriteHeader(http.StatusTeapot)
		return
	}
	s.mu.Lock()
	s.seqs = append(s.seqs, req.Producer.Sequence)
	var a scripted
	if len(s.answers) > 0 {
		a, s.answers = s.answers[0], s.answers[1:]
	}
	slow := s.slow
	s.slow = 0
	s.mu.Unlock()
	time.Sleep(slow)
	if a.status == 0 || a.status == http.StatusOK {
		_, _ = io.WriteString(w, `{"records":[{"partition":0,"offset":0}]}`)
		return
	}
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

func (s *scriptedProducerServer) script(a ...scripted) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers, s.seqs = a, nil
}

func (s *scriptedProducerServer) sent() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int32(nil), s.seqs...)
}

const unavailable = `{"error":{"code":"unavailable","message":"orders/0: leader broker 1 is unavailable"}}`

// scriptedClient is a client of s over in-memory pipes (synctest's
// clock runs while it waits), with timeout as its HTTP client's (0: none).
func scriptedClient(t *testing.T, s *scriptedProducerServer, timeout time.Duration) *apiclient.Client {
	t.Helper()
	srv := httptest.NewUnstartedServer(s)
	srv.Listener = newPipeListener()
	srv.Start()
	t.Cleanup(srv.Close)
	return apiclient.New("http://pipe/", apiclient.WithHTTPClient(&http.Client{Timeout: timeout,
		Transport: &http.Transport{DialContext: srv.Listener.(*pipeListener).dial}}))
}

// The Go client's idempotent producer (docs/phase-6-network-api.md §
// Idempotent producers): a 503 is sent again with the same sequence after
// its Retry-After; a refusal on the first send wrote nothing and leaves
// the sequence where it was; retries are bounded, and once the outcome
// is unknown the partition takes no more requests of the producer, while
// other partitions go on.
func TestAPIClientProducerRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scriptedProducerServer{}
		c := scriptedClient(t, s, 0)
		ctx := context.Background()
		p, err := c.NewProducer(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(7), p.ID())
		two := []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}}

		// Retry-After honoured, same sequence each time.
		s.script(scripted{503, "3", unavailable}, scripted{503, "3", unavailable})
		start := time.Now()
		_, err = p.ProduceTo(ctx, "orders", 0, two)
		require.NoError(t, err)
		require.Equal(t, 6*time.Second, time.Since(start), "two Retry-After waits of 3 s")
		require.Equal(t, []int32{0, 0, 0}, s.sent())

		// A refusal on the first send: nothing written, the sequence stays.
		s.script(scripted{409, "", `{"error":{"code":"out_of_order_sequence","message":"gap"}}`})
		_, err = p.ProduceTo(ctx, "orders", 0, two)
		require.ErrorIs(t, err, apiclient.ErrOutOfOrderSequence)
		_, err = p.ProduceTo(ctx, "orders", 0, two)
		require.NoError(t, err)
		require.Equal(t, []int32{2, 2}, s.sent())

		// Bounded: ten sends, then the outcome is unknown and the
		// partition refuses further requests without sending them.
		s.script(repeat(scripted{503, "1", unavailable}, 20)...)
		_, err = p.ProduceTo(ctx, "orders", 0, two)
		require.ErrorIs(t, err, apiclient.ErrProducerOutcomeUnknown)
		require.ErrorIs(t, err, apiclient.ErrUnavailable)
		var oe *apiclient.ProducerOutcomeError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, int32(4), oe.Sequence)
		require.Len(t, s.sent(), 10)
		s.script()
		_, err = p.ProduceTo(ctx, "orders", 0, two)
		require.ErrorIs(t, err, apiclient.ErrProducerOutcomeUnknown)
		require.Empty(t, s.sent(), "nothing sent to a partition in doubt")

		// Another partition starts at 0 and goes on.
		_, err = p.ProduceTo(ctx, "orders", 1, two)
		require.NoError(t, err)
		require.Equal(t, []int32{0}, s.sent())

		// duplicate_sequence on a retry: written before; the sequence
		// moves on.
		s.script(scripted{503, "1", unavailable}, scripted{409, "", `{"error":{"code":"duplicate_sequence","message":"count it written"}}`})
		_, err = p.ProduceTo(ctx, "orders", 1, two)
		require.ErrorIs(t, err, apiclient.ErrDuplicateSequence)
		_, err = p.ProduceTo(ctx, "orders", 1, two)
		require.NoError(t, err)
		require.Equal(t, []int32{2, 2, 4}, s.sent())
	})
}

// A request the HTTP client timed out on (it may have been written) is
// sent again with the same sequence.
func TestAPIClientProducerRetriesTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scriptedProducerServer{}
		c := scriptedClient(t, s, time.Second)
		p, err := c.NewProducer(context.Background())
		require.NoError(t, err)
		s.mu.Lock()
		s.slow = 5 * time.Second
		s.mu.Unlock()
		_, err = p.ProduceTo(context.Background(), "orders", 0, []apiclient.ProduceRecord{{Value: []byte("a")}})
		require.NoError(t, err)
		require.Equal(t, []int32{0, 0}, s.sent(), "timed out, then sent again as it was")
	})
}

func repeat(a scripted, n int) []scripted {
	out := make([]scripted, n)
	for i := range out {
		out[i] = a
	}
	return out
}
