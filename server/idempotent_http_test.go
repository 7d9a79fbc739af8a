package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

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

// docs/phase-6-network-api.md § Idempotent producers, in cluster mode:
// producer ids come from the metadata group, unique whichever node hands
// them out; a request through a node that does not lead the partition is
// checked by the leader's node, so a request sent again is answered with
// its first offsets and stored once, and a refusal keeps its code on the
// way back (out_of_order_sequence, a typed error between nodes).
func TestClusterModeIdempotentHTTPProduce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 3)
		for id := 1; id <= 3; id++ {
			c.start(id, nil, false, manual)
		}
		c.awaitNodes(c.nodes[1], "a controller and three registered nodes", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller != 0 && len(res.Nodes) == 3
		})
		_, _, err := c.nodes[1].client.CreateTopic(ctx, "orders", 1, 3)
		require.NoError(t, err)
		c.awaitReady()
		d, err := c.nodes[1].client.Topic(ctx, "orders")
		require.NoError(t, err)
		via := c.nodes[d.Partitions[0].Leader%3+1] // a node that does not lead orders/0

		ids := map[int64]bool{}
		for id := 1; id <= 3; id++ {
			res, err := c.nodes[id].client.NewProducerID(ctx)
			require.NoError(t, err)
			require.False(t, ids[res.ProducerID], "producer id %d handed out twice", res.ProducerID)
			ids[res.ProducerID] = true
		}

		p, err := via.client.NewProducerID(ctx)
		require.NoError(t, err)
		send := func(seq int32, values ...string) (*apiclient.ProduceResponse, error) {
			var recs []apiclient.ProduceRecord
			for _, v := range values {
				recs = append(recs, apiclient.ProduceRecord{Value: []byte(v)})
			}
			return postJSON[apiclient.ProduceResponse](ctx, via, "/api/topics/orders/records?partition=0",
				apiclient.ProduceRequest{Records: recs, Producer: &apiclient.ProducerIdentity{ID: p.ProducerID, Sequence: seq}})
		}
		first, err := send(0, "a", "b")
		require.NoError(t, err)
		again, err := send(0, "a", "b")
		require.NoError(t, err)
		require.Equal(t, first.Records[0].Offset, again.Records[0].Offset)
		require.Equal(t, first.Records[1].Offset, again.Records[1].Offset)
		_, err = send(7, "gap")
		var e *apiclient.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, http.StatusConflict, e.Status, err)
		require.Equal(t, apiclient.CodeOutOfOrderSequence, e.Code, err)

		got, err := c.nodes[d.Partitions[0].Leader].client.Fetch(ctx, "orders", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, got.Records, 2, "stored once")
	})
}

// postJSON posts in to path on r and decodes the answer as the client
// does: an error answer is an *apiclient.Error.
func postJSON[T any](ctx context.Context, r *running, path string, in any) (*T, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var eb apiclient.ErrorResponse
		if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
			return nil, err
		}
		return nil, &apiclient.Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	var out T
	return &out, json.NewDecoder(resp.Body).Decode(&out)
}
