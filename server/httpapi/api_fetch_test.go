package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// docs/phase-6-network-api.md § Producers and transaction markers: a
// fetched record says what its envelope says of its producer — the
// producer's id, epoch and sequence, "transactional":true, and a marker's
// "commit" or "abort" with a null key and value — and a record without
// them reads as it always did. Written through the cluster, as the Kafka
// listener writes them; read back over HTTP, as JSON and through the Go
// client.
func TestAPIFetchProducerIdentity(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	cl := r.srv.Cluster()
	require.NoError(t, cl.CreateTopic("orders", 1, 1))
	idem, err := cl.NewProducerID(ctx)
	require.NoError(t, err)
	txn, err := cl.NewProducerID(ctx)
	require.NoError(t, err)
	aborted, err := cl.NewProducerID(ctx)
	require.NoError(t, err)

	p := cluster.NewProducer(cl, "orders")
	send := func(rec envelope.Record) {
		t.Helper()
		_, err := p.SendBatchTo(0, []topic.Message{{Payload: envelope.Payload(rec)}})
		require.NoError(t, err)
	}
	send(envelope.Record{Value: []byte("plain")})
	send(envelope.Record{Key: []byte("k"), Value: []byte("once"), HasProducer: true, Producer: envelope.Producer{ID: idem, Sequence: 0}})
	send(envelope.Record{Value: []byte("in a txn"), HasProducer: true, Producer: envelope.Producer{ID: txn, Sequence: 0}, Transactional: true})
	require.NoError(t, cl.WriteTxnMarker(ctx, "orders", 0, txn, 0, true))
	send(envelope.Record{Value: []byte("undone"), HasProducer: true, Producer: envelope.Producer{ID: aborted, Epoch: 3, Sequence: 0}, Transactional: true})
	require.NoError(t, cl.WriteTxnMarker(ctx, "orders", 0, aborted, 3, false))

	resp, err := http.Get(r.base + "/api/topics/orders/partitions/0/records")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var raw struct{ Records []map[string]json.RawMessage }
	require.NoError(t, json.Unmarshal(body, &raw))
	require.Len(t, raw.Records, 6)
	fields := func(i int) map[string]string {
		out := map[string]string{}
		for k, v := range raw.Records[i] {
			if k != "timestamp" && k != "timestamp_ms" {
				out[k] = string(v)
			}
		}
		return out
	}
	id := func(n int64) string { b, _ := json.Marshal(n); return string(b) }
	require.Equal(t, map[string]string{"offset": "0", "key": "null", "value": `"cGxhaW4="`}, fields(0), "a plain record: nothing new")
	require.Equal(t, map[string]string{"offset": "1", "key": `"aw=="`, "value": `"b25jZQ=="`,
		"producer": `{"id":` + id(idem) + `,"epoch":0,"sequence":0}`}, fields(1))
	require.Equal(t, map[string]string{"offset": "2", "key": "null", "value": `"aW4gYSB0eG4="`,
		"producer": `{"id":` + id(txn) + `,"epoch":0,"sequence":0}`, "transactional": "true"}, fields(2))
	require.Equal(t, map[string]string{"offset": "3", "key": "null", "value": "null",
		"producer": `{"id":` + id(txn) + `,"epoch":0,"sequence":0}`, "transactional": "true", "marker": `"commit"`}, fields(3))
	require.Equal(t, `{"id":`+id(aborted)+`,"epoch":3,"sequence":0}`, fields(4)["producer"])
	require.Equal(t, `"abort"`, fields(5)["marker"])

	got, err := r.client.Fetch(ctx, "orders", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, got.Records, 6)
	require.Nil(t, got.Records[0].Producer)
	require.Equal(t, &apiclient.ProducerIdentity{ID: idem}, got.Records[1].Producer)
	require.False(t, got.Records[1].Transactional)
	require.Empty(t, got.Records[1].Marker)
	require.True(t, got.Records[2].Transactional)
	require.Empty(t, got.Records[2].Marker)
	m := got.Records[3]
	require.Equal(t, apiclient.MarkerCommit, m.Marker)
	require.True(t, m.Transactional)
	require.Nil(t, m.Key)
	require.Nil(t, m.Value)
	require.Equal(t, &apiclient.ProducerIdentity{ID: aborted, Epoch: 3}, got.Records[4].Producer)
	require.Equal(t, apiclient.MarkerAbort, got.Records[5].Marker)
}
