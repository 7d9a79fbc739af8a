package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
)

// docs/design.md § High watermark, "After a restart", over HTTP: a server
// restarted with PYSTREAM_BROKERS=2 after 3 keeps serving what was below
// each watermark at shutdown — immediately, in manual mode, with nothing
// deactivated — and never the record brokers 1 and 2 hold but broker 3
// lacks. GET /api/cluster says broker 3 is known but not started, and why.
func TestE2ERestartWithFewerBrokers(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	r := startServer(t, dir, 3, manual)
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	for _, v := range []string{"a", "b", "c", "d"} {
		_, err := r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte(v)}})
		require.NoError(t, err)
	}
	_, err = r.client.StopBroker(ctx, 3)
	require.NoError(t, err)
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("unacked")}})
	apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable) // on brokers 1 and 2 only
	r.stop()

	r = startServer(t, dir, 2, manual)
	fetched, err := r.client.Fetch(ctx, "orders", 0, 0, 100)
	require.NoError(t, err)
	var values []string
	for _, rec := range fetched.Records {
		values = append(values, string(rec.Value))
	}
	require.Equal(t, []string{"a", "b", "c", "d"}, values)
	require.Equal(t, uint64(4), fetched.HighWatermark)
	require.Equal(t, uint64(5), fetched.LogEnd, "the leader holds the unacknowledged record")
	rest, err := r.client.Fetch(ctx, "orders", 0, 4, 100)
	require.NoError(t, err)
	require.Empty(t, rest.Records)

	detail, err := r.client.Topic(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, uint64(4), detail.Partitions[0].HighWatermark)
	require.Equal(t, []int{1, 2, 3}, detail.Partitions[0].Active, "nothing deactivated in manual mode")

	cl, err := r.client.Cluster(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, cl.ConfiguredBrokers)
	require.Len(t, cl.Brokers, 3)
	require.Equal(t, apiclient.BrokerStatus{ID: 1, Available: true, Configured: true}, cl.Brokers[0])
	require.Equal(t, apiclient.BrokerStatus{ID: 2, Available: true, Configured: true}, cl.Brokers[1])
	b3 := cl.Brokers[2]
	require.Equal(t, 3, b3.ID)
	require.False(t, b3.Available)
	require.False(t, b3.Configured)
	require.Contains(t, b3.Reason, "PYSTREAM_BROKERS=2")

	// Commits follow the watermark: up to 4, not past it.
	_, err = r.client.CommitOffset(ctx, "billing", "orders", 0, 4)
	require.NoError(t, err)
	_, err = r.client.CommitOffset(ctx, "billing", "orders", 0, 5)
	e := apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Equal(t, uint64(4), *e.HighWatermark)

	// Started through the API, broker 3 is available but still not
	// configured: a restart would leave it out again.
	st, err := r.client.StartBroker(ctx, 3)
	require.NoError(t, err)
	require.True(t, st.Available)
	require.False(t, st.Configured)
	require.Contains(t, st.Reason, "restart")
}
