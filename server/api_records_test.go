package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// docs/phase-6-network-api.md § Keys and headers: a key and headers
// produced over HTTP are stored with the record and fetched back, null and
// empty kept apart; a keyed record routes by SHA-256 unless partition=N
// names the partition; a raw value that starts with the envelope's magic
// reads back as itself; a plain payload (written before keys were stored,
// or by a phase API) reads as a value with no key.
func TestAPIRecordsKeysAndHeadersRoundTrip(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 3, 1)
	require.NoError(t, err)

	key := []byte("user-123")
	p := topic.PartitionForKey(key, 3)
	headers := []apiclient.RecordHeader{{Key: "trace-id", Value: []byte("abc")}, {Key: "nil", Value: nil}, {Key: "", Value: []byte{}}}
	magic := []byte(envelope.Magic + "raw bytes")
	res, err := r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{
		{Key: key, Headers: headers, Value: []byte("hello")},
		{Key: key, Value: magic},
		{Key: []byte{}, Value: []byte{}},
	})
	require.NoError(t, err)
	require.Equal(t, p, res.Records[0].Partition, "a key routes by SHA-256")
	_, err = r.client.ProduceRaw(ctx, "orders", key, []byte("raw form"))
	require.NoError(t, err)
	// A plain payload, as the phase APIs and every earlier server store it.
	_, err = cluster.NewProducer(r.srv.Cluster(), "orders").Send(key, []byte("plain"))
	require.NoError(t, err)

	out, err := r.client.Fetch(ctx, "orders", p, 0, 10)
	require.NoError(t, err)
	got := out.Records
	require.Len(t, got, 4)
	require.Equal(t, key, got[0].Key)
	require.Equal(t, headers, got[0].Headers)
	require.Equal(t, "hello", string(got[0].Value))
	require.Nil(t, got[0].CreateTimestampMS, "HTTP gives no create time")
	require.Equal(t, magic, got[1].Value, "a value that starts with the magic reads as itself")
	require.Nil(t, got[1].Headers)
	require.Equal(t, key, got[2].Key, "the octet-stream form stores its key too")
	require.Equal(t, "raw form", string(got[2].Value))
	require.Nil(t, got[3].Key, "a plain payload has no key")
	require.Equal(t, "plain", string(got[3].Value))

	// partition=N wins over the key; the empty key and value stay empty.
	other := (p + 1) % 3
	_, err = r.client.ProduceTo(ctx, "orders", other, []apiclient.ProduceRecord{{Key: []byte{}, Value: []byte{}}})
	require.NoError(t, err)
	out, err = r.client.Fetch(ctx, "orders", other, 0, 10)
	require.NoError(t, err)
	last := out.Records[len(out.Records)-1]
	require.NotNil(t, last.Key)
	require.Empty(t, last.Key)
	require.NotNil(t, last.Value)
	require.Empty(t, last.Value)
}

// docs/phase-6-network-api.md § Keys and headers: on the wire, a record
// without a key says "key":null, headers are omitted when there are none,
// and a null value (a Kafka tombstone, stored by the Kafka path) is
// "value":null; a header without a key is refused.
func TestAPIRecordsWireShape(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	_, err = cluster.NewProducer(r.srv.Cluster(), "orders").SendBatch([]topic.Message{
		{Payload: []byte("v")},
		{Key: []byte("k"), Payload: envelope.Payload(envelope.Record{Key: []byte("k"), Timestamp: 1700000000000, HasTimestamp: true})},
	})
	require.NoError(t, err)
	resp, err := http.Get(r.base + "/api/topics/orders/partitions/0/records")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var doc struct{ Records []map[string]json.RawMessage }
	require.NoError(t, json.Unmarshal(body, &doc))
	require.Len(t, doc.Records, 2)
	require.Equal(t, "null", string(doc.Records[0]["key"]))
	require.NotContains(t, doc.Records[0], "headers")
	require.NotContains(t, doc.Records[0], "create_timestamp_ms")
	require.Equal(t, `"aw=="`, string(doc.Records[1]["key"]))
	require.Equal(t, "null", string(doc.Records[1]["value"]))
	require.Equal(t, "1700000000000", string(doc.Records[1]["create_timestamp_ms"]))

	resp, err = http.Post(r.base+"/api/topics/orders/records", "application/json",
		strings.NewReader(`{"records":[{"value":"dg==","headers":[{"value":"dg=="}]}]}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
