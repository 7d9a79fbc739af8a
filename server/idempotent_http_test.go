package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// losingTransport sends every request to the server, and for the first
// lose produce requests throws the answer away and returns an error
// instead: the request was served, the client never learns how.
type losingTransport struct {
	base     http.RoundTripper
	lose     atomic.Int32
	produces atomic.Int32
}

func (l *losingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/records") {
		return resp, err
	}
	l.produces.Add(1)
	if l.lose.Add(-1) < 0 {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return nil, errors.New("connection reset by peer (the answer was lost)")
}

// docs/phase-6-network-api.md § Idempotent producers: a produce whose
// answer is lost after the server wrote it is sent again by the Go
// client's idempotent producer with the same sequence numbers, and the
// records are stored exactly once — the retried request is answered
// with the offsets of the first write. A plain produce, retried by its
// caller the same way, stores them twice: what the producer is for.
func TestAPIClientProducerLostAnswerStoredOnce(t *testing.T) {
	r := startServer(t, t.TempDir(), 3)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 2, 3)
	require.NoError(t, err)

	lossy := &losingTransport{base: apiclient.NewTransport()}
	hc := &http.Client{Transport: lossy}
	t.Cleanup(hc.CloseIdleConnections)
	c := apiclient.New(r.base, apiclient.WithHTTPClient(hc))
	p, err := c.NewProducer(ctx)
	require.NoError(t, err)

	batch := func(prefix string, n int) []apiclient.ProduceRecord {
		recs := make([]apiclient.ProduceRecord, n)
		for i := range recs {
			recs[i] = apiclient.ProduceRecord{Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
		}
		return recs
	}
	var want []string
	for i, lose := range []int32{1, 0, 2, 1} {
		lossy.lose.Store(lose)
		before := lossy.produces.Load()
		recs := batch(fmt.Sprint("b", i), 3)
		res, err := p.ProduceTo(ctx, "orders", 1, recs)
		require.NoError(t, err, "batch %d", i)
		require.Equal(t, lose+1, lossy.produces.Load()-before, "batch %d: sent once, and again per lost answer", i)
		for j, rec := range res.Records {
			require.Equal(t, uint64(len(want)+j), rec.Offset, "batch %d record %d: the offsets of its one write", i, j)
			require.Equal(t, 1, rec.Partition)
		}
		for _, rec := range recs {
			want = append(want, string(rec.Value))
		}
	}
	got, err := r.client.Fetch(ctx, "orders", 1, 0, 100)
	require.NoError(t, err)
	var values []string
	for _, rec := range got.Records {
		values = append(values, string(rec.Value))
	}
	require.Equal(t, want, values, "every record stored exactly once, in order")

	// The same loss without a producer: the caller's retry stores the
	// batch twice.
	lossy.lose.Store(1)
	_, err = c.ProduceTo(ctx, "orders", 0, batch("plain", 1))
	require.Error(t, err)
	_, err = c.ProduceTo(ctx, "orders", 0, batch("plain", 1))
	require.NoError(t, err)
	got, err = r.client.Fetch(ctx, "orders", 0, 0, 100)
	require.NoError(t, err)
	require.Len(t, got.Records, 2)
}
