package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// api.md: max is "capped server-side at 1000"; only max < 1 and a number
// that overflows are invalid. A large max, as Kafka clients send for "as
// many as you have", is served as 1000 records, however large it is.
func TestFetchLargeMaxIsCapped(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	recs := make([]apiclient.ProduceRecord, MaxFetchRecords+5)
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
		require.Len(t, out.Records, MaxFetchRecords, max)
		require.Equal(t, uint64(MaxFetchRecords), out.NextOffset, max)
	}
	resp, err := http.Get(r.base + "/api/topics/orders/partitions/0/records?max=18446744073709551616")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a max that overflows is invalid")
}
