package server

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/httpapi"
)

// docs/phase-6-network-api.md § Consume: max is capped at 1000; only max < 1
// and a number that overflows are invalid. A large max, as Kafka clients send for "as
// many as you have", is served as 1000 records, however large it is.
func TestFetchLargeMaxIsCapped(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	recs := make([]apiclient.ProduceRecord, httpapi.MaxFetchRecords+5)
	for i := range recs {
		recs[i] = apiclient.ProduceRecord{Value: []byte("v")}
	}
	_, err = r.client.Produce(ctx, "orders", recs)
	require.NoError(t, err)

	for _, max := range []string{"1000", "1001", "2147483647", "2147483648", "99999999999", "18446744073709551615"} {
		resp, err := http.Get(r.base + "/api/topics/orders/partitions/0/records?max=" + max)
		require.NoError(t, err)
		var out apiclient.FetchResponse
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, max)
		require.Len(t, out.Records, httpapi.MaxFetchRecords, max)
		require.Equal(t, uint64(httpapi.MaxFetchRecords), out.NextOffset, max)
	}
	resp, err := http.Get(r.base + "/api/topics/orders/partitions/0/records?max=18446744073709551616")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a max that overflows is invalid")
}

// A fetch answer is bounded in bytes as well as in records (like Kafka's
// fetch.max.bytes): 1000 records of 1 MiB would otherwise be read into
// memory and base64-encoded in one answer, gigabytes for one GET. The
// answer stops once the values reach the budget, always holds at least one
// record, and next_offset says where to continue, so a consumer loop reads
// everything in order.
func TestFetchBoundedInBytes(t *testing.T) {
	cfg := Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Brokers = 1
	cfg.KafkaPort = 0 // no fixed ports in tests
	cfg.LogLevel = LogLevel(LevelError)
	cfg.FetchMaxBytes = FetchBytes(10 * 1024)
	srv, err := New(cfg, NewLogger(io.Discard, cfg))
	require.NoError(t, err)
	r := serveExisting(t, srv)
	ctx := t.Context()
	_, _, err = r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	value := make([]byte, 4*1024)
	const n = 25
	for i := range n {
		value[0] = byte(i)
		_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: value}})
		require.NoError(t, err)
	}

	first, err := r.client.Fetch(ctx, "orders", 0, 0, 100)
	require.NoError(t, err)
	require.Len(t, first.Records, 3, "two records stay below the budget, the third reaches it")

	var got []byte
	for next := uint64(0); next < n; {
		out, err := r.client.Fetch(ctx, "orders", 0, next, 100)
		require.NoError(t, err)
		require.NotEmpty(t, out.Records, "at least one record per answer")
		size := 0
		for i, rec := range out.Records {
			require.Equal(t, next+uint64(i), rec.Offset)
			if i < len(out.Records)-1 {
				size += len(rec.Value)
			}
			got = append(got, rec.Value[0])
		}
		require.Less(t, size, r.srv.fetchBytes, "only the last record may cross the budget")
		next = out.NextOffset
	}
	require.Len(t, got, n)
	for i, b := range got {
		require.Equal(t, byte(i), b)
	}

	// A single record larger than the budget is still served.
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: make([]byte, 12*1024)}})
	require.NoError(t, err)
	one, err := r.client.Fetch(ctx, "orders", 0, n, 100)
	require.NoError(t, err)
	require.Len(t, one.Records, 1)
	require.Equal(t, uint64(n+1), one.NextOffset)
}
