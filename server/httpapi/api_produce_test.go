package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/topic"
)

// serveWithClusterOptions serves brokers 1..brokers of an embedded
// cluster opened with opts, for limits the server's configuration does
// not set.
func serveWithClusterOptions(t *testing.T, brokers int, opts cluster.Options) *running {
	t.Helper()
	return startServer(t, t.TempDir(), brokers, func(c *testConfig) { c.Cluster = opts })
}

// keyFor returns a key that routes to partition p of n.
func keyFor(p, n int) []byte {
	for i := 0; ; i++ {
		k := []byte{'k', byte(i), byte(i >> 8)}
		if topic.PartitionForKey(k, n) == p {
			return k
		}
	}
}

// Contract (docs/phase-6-network-api.md, Errors: 413 for a record above the
// maximum record size): the limit is the one the cluster's logs enforce,
// not the log's default. A batch with one record above it is refused whole
// before anything is written, so the answer carries no per-record outcome
// and no partition holds a record; a record of exactly the limit is stored.
func TestAPIProducePayloadLimitIsTheCluster(t *testing.T) {
	const limit = 16
	r := serveWithClusterOptions(t, 2, cluster.Options{Broker: cluster.BrokerOptions{MaxPayloadSize: limit}})
	ctx := t.Context()
	require.Equal(t, limit, r.srv.Cluster().MaxPayloadSize())
	_, _, err := r.client.CreateTopic(ctx, "orders", 2, 1)
	require.NoError(t, err)

	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{
		{Key: keyFor(0, 2), Value: make([]byte, limit)},
		{Key: keyFor(1, 2), Value: make([]byte, limit+1)},
	})
	e := apitest.APIErr(t, err, http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
	require.Nil(t, e.Records, "refused before the write: no record has an outcome")
	_, err = r.client.ProduceRaw(ctx, "orders", keyFor(0, 2), make([]byte, limit+1))
	e = apitest.APIErr(t, err, http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
	require.Nil(t, e.Records)
	for p := range 2 {
		got, err := r.client.Fetch(ctx, "orders", p, 0, 10)
		require.NoError(t, err)
		require.Empty(t, got.Records, "partition %d", p)
	}

	// The limit is the stored payload's: a plain value of exactly the
	// limit fits; with a key, the key is stored too and it does not.
	_, err = r.client.ProduceRawTo(ctx, "orders", 1, []byte("k"), make([]byte, limit))
	apitest.APIErr(t, err, http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
	res, err := r.client.ProduceRawTo(ctx, "orders", 1, nil, make([]byte, limit))
	require.NoError(t, err)
	require.Equal(t, 1, res.Records[0].Partition)
	require.Equal(t, uint64(0), res.Records[0].Offset)
}

// The topic's max.message.bytes bounds a produce request's records, all
// together, by their stored bytes: a request of exactly the limit is
// written, one byte more is 413 naming the key, refused before anything
// is written, whether routed or sent to one partition, JSON or raw; a
// topic without it has Kafka's default (1048588), under the body cap.
func TestAPIProduceMaxMessageBytes(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	_, _, err := r.client.CreateTopicWithConfig(ctx, "orders", 2, 1, map[string]string{topic.MaxMessageBytesKey: "100"})
	require.NoError(t, err)

	res, err := r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: make([]byte, 50)}, {Value: make([]byte, 50)}})
	require.NoError(t, err, "100 bytes: exactly the limit")
	require.Len(t, res.Records, 2)
	for _, over := range []func() error{
		func() error {
			_, err := r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: make([]byte, 50)}, {Value: make([]byte, 51)}})
			return err
		},
		func() error {
			_, err := r.client.ProduceTo(ctx, "orders", 1, []apiclient.ProduceRecord{{Value: make([]byte, 100)}, {Value: []byte("x")}})
			return err
		},
		func() error { _, err := r.client.ProduceRaw(ctx, "orders", nil, make([]byte, 101)); return err },
		// With a key, the key is stored too.
		func() error { _, err := r.client.ProduceRaw(ctx, "orders", []byte("k"), make([]byte, 100)); return err },
	} {
		e := apitest.APIErr(t, over(), http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
		require.Contains(t, e.Message, "max.message.bytes")
		require.Contains(t, e.Message, "100 bytes")
		require.Nil(t, e.Records, "refused before the write")
	}
	total := 0
	for p := range 2 {
		got, err := r.client.Fetch(ctx, "orders", p, 0, 10)
		require.NoError(t, err)
		total += len(got.Records)
	}
	require.Equal(t, 2, total, "only the first request's records")

	_, _, err = r.client.CreateTopic(ctx, "plain", 1, 1)
	require.NoError(t, err)
	_, err = r.client.ProduceRaw(ctx, "plain", nil, make([]byte, 500_000))
	require.NoError(t, err, "Kafka's default max.message.bytes")
}

// Contract (apiclient.ErrorBody.Records: per input record, its acknowledged
// placement or its own error): after a partial failure each refused record
// carries the error of its own partition, keyless records included, and
// every acknowledged record its placement. The partition comes from the
// cluster's result; the server does not route keys a second time.
func TestAPIProducePartialFailureOutcomes(t *testing.T) {
	r := startServer(t, t.TempDir(), 3)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 3, 1) // partition p led by broker p+1
	require.NoError(t, err)
	for _, id := range []int{2, 3} {
		_, err := r.client.StopBroker(ctx, id)
		require.NoError(t, err)
	}

	// Keyless records go round robin: partitions 0, 1, 2.
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{
		{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")},
	})
	e := apitest.APIErr(t, err, http.StatusServiceUnavailable, CodeUnavailable)
	require.Equal(t, []int{2, 3}, e.BrokerIDs)
	require.Len(t, e.Records, 3)
	require.Nil(t, e.Records[0].Error)
	require.Equal(t, apiclient.ProduceResult{Partition: 0, Offset: 0, Timestamp: e.Records[0].Timestamp,
		TimestampMS: unixMillis(e.Records[0].Timestamp), Leader: 1, Brokers: []int{1}}, e.Records[0])
	for _, i := range []int{1, 2} {
		require.NotNil(t, e.Records[i].Error, "record %d", i)
		require.Equal(t, CodeUnavailable, e.Records[i].Error.Code)
	}
	require.NotEqual(t, e.Records[1].Error.Message, e.Records[2].Error.Message,
		"each refused record has its own partition's error, not the batch's")
	require.NotEqual(t, e.Message, e.Records[1].Error.Message)
}

// docs/phase-6-network-api.md § Produce: partition=N sends every record to
// partition N whatever its key, in the JSON form and the raw one; a
// partition the topic lacks is 404 and writes nothing.
func TestAPIProduceToPartition(t *testing.T) {
	r := serveWithClusterOptions(t, 2, cluster.Options{})
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 3, 2)
	require.NoError(t, err)
	res, err := r.client.ProduceTo(ctx, "orders", 2, []apiclient.ProduceRecord{{Key: keyFor(0, 3), Value: []byte("a")}, {Value: []byte("b")}})
	require.NoError(t, err)
	for i, rec := range res.Records {
		require.Equal(t, 2, rec.Partition)
		require.Equal(t, uint64(i), rec.Offset)
	}
	resp, err := http.Post(r.base+"/api/topics/orders/records?partition=2&key=user-1", "application/octet-stream", strings.NewReader("c"))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	got, err := r.client.Fetch(ctx, "orders", 2, 0, 10)
	require.NoError(t, err)
	require.Len(t, got.Records, 3)
	require.Equal(t, "c", string(got.Records[2].Value))

	_, err = r.client.ProduceTo(ctx, "orders", 3, []apiclient.ProduceRecord{{Value: []byte("x")}})
	var ae *apiclient.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusNotFound, ae.Status)
	for p := range 2 {
		got, err := r.client.Fetch(ctx, "orders", p, 0, 10)
		require.NoError(t, err)
		require.Empty(t, got.Records, "partition %d", p)
	}
}

// A write to a partition with fewer active replicas than the topic's
// min.insync.replicas is 503, its message naming the setting and saying
// nothing was written; with the setting removed the write goes on. (A
// setting above the replication factor is taken, as Kafka takes it.)
func TestAPIProduceMinInsyncReplicas(t *testing.T) {
	r := startServer(t, t.TempDir(), 2)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 2)
	require.NoError(t, err)
	_, err = r.client.AlterTopicConfig(ctx, "orders", map[string]string{"min.insync.replicas": "3"}, nil)
	require.NoError(t, err)

	_, err = r.client.ProduceTo(ctx, "orders", 0, []apiclient.ProduceRecord{{Value: []byte("refused")}})
	e := apitest.APIErr(t, err, http.StatusServiceUnavailable, CodeUnavailable)
	require.Contains(t, e.Message, "min.insync.replicas (3)")
	require.Contains(t, e.Message, "orders/0: 2 active replica(s)")
	require.Contains(t, e.Message, "nothing was written")
	got, err := r.client.Fetch(ctx, "orders", 0, 0, 10)
	require.NoError(t, err)
	require.Empty(t, got.Records)

	_, err = r.client.AlterTopicConfig(ctx, "orders", nil, []string{"min.insync.replicas"})
	require.NoError(t, err)
	res, err := r.client.ProduceTo(ctx, "orders", 0, []apiclient.ProduceRecord{{Value: []byte("taken")}})
	require.NoError(t, err)
	require.Equal(t, uint64(0), res.Records[0].Offset)
}
