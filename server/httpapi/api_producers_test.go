package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/topic/envelope"
)

// The HTTP API's idempotent producers (docs/phase-6-network-api.md §
// Idempotent producers; the rule is the leader's, docs/kafka.md §
// Idempotent producers).

// produceIdem sends records to topic/partition as producer id at epoch,
// from sequence seq, as a client's JSON body.
func produceIdem(t *testing.T, c *apiclient.Client, topicName string, partition int, id int64, epoch int16, seq int32, values ...string) (*apiclient.ProduceResponse, error) {
	t.Helper()
	recs := make([]apiclient.ProduceRecord, len(values))
	for i, v := range values {
		recs[i] = apiclient.ProduceRecord{Key: []byte("k"), Value: []byte(v)}
	}
	return postProduce(t, c, topicName, fmt.Sprintf("partition=%d", partition),
		apiclient.ProduceRequest{Records: recs, Producer: &apiclient.ProducerIdentity{ID: id, Epoch: epoch, Sequence: seq}})
}

// postProduce posts body (JSON) to the produce route with query.
func postProduce(t *testing.T, c *apiclient.Client, topicName, query string, body any) (*apiclient.ProduceResponse, error) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	return post(t, c.BaseURL()+"/api/topics/"+topicName+"/records?"+query, "application/json", b)
}

// post sends one produce request and reads its answer as the client does.
func post(t *testing.T, target, ctype string, body []byte) (*apiclient.ProduceResponse, error) {
	t.Helper()
	resp, err := http.Post(target, ctype, bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		eb := apitest.DecodeError(t, resp)
		return nil, &apiclient.Error{Status: resp.StatusCode, Code: eb.Code, Message: eb.Message}
	}
	var out apiclient.ProduceResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return &out, nil
}

// values fetches every value of a partition, in offset order.
func values(t *testing.T, c *apiclient.Client, topicName string, partition int) []string {
	t.Helper()
	res, err := c.Fetch(t.Context(), topicName, partition, 0, 1000)
	require.NoError(t, err)
	var out []string
	for _, r := range res.Records {
		out = append(out, string(r.Value))
	}
	return out
}

func offsets(res *apiclient.ProduceResponse) []uint64 {
	var out []uint64
	for _, r := range res.Records {
		out = append(out, r.Offset)
	}
	return out
}

// POST /api/producers hands out ids never handed out before, at epoch 0.
func TestAPIProducerNewIDs(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	a, err := r.client.NewProducerID(t.Context())
	require.NoError(t, err)
	b, err := r.client.NewProducerID(t.Context())
	require.NoError(t, err)
	require.NotEqual(t, a.ProducerID, b.ProducerID)
	require.GreaterOrEqual(t, a.ProducerID, int64(0))
	require.Equal(t, int16(0), a.Epoch)
}

// KIP-98 over HTTP: the same request sent again — its answer was lost —
// is answered with the offsets of its first write and stored once, with
// its records' producer identity in their envelopes; the next request
// continues the sequence. Both forms, JSON and octet-stream.
func TestAPIProducerRetryStoredOnce(t *testing.T) {
	r := startServer(t, t.TempDir(), 2)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 2, 2)
	require.NoError(t, err)
	p, err := r.client.NewProducerID(ctx)
	require.NoError(t, err)

	first, err := produceIdem(t, r.client, "orders", 1, p.ProducerID, 0, 0, "a", "b", "c")
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1, 2}, offsets(first))
	again, err := produceIdem(t, r.client, "orders", 1, p.ProducerID, 0, 0, "a", "b", "c")
	require.NoError(t, err, "the same request again is answered, not refused")
	require.Equal(t, offsets(first), offsets(again))
	next, err := produceIdem(t, r.client, "orders", 1, p.ProducerID, 0, 3, "d")
	require.NoError(t, err)
	require.Equal(t, []uint64{3}, offsets(next))

	// The octet-stream form carries the identity in its query.
	raw := func() (*apiclient.ProduceResponse, error) {
		return post(t, fmt.Sprintf("%s/api/topics/orders/records?partition=1&producer_id=%d&producer_epoch=0&sequence=4", r.base, p.ProducerID),
			"application/octet-stream", []byte("e"))
	}
	e1, err := raw()
	require.NoError(t, err)
	e2, err := raw()
	require.NoError(t, err)
	require.Equal(t, []uint64{4}, offsets(e1))
	require.Equal(t, offsets(e1), offsets(e2))

	require.Equal(t, []string{"a", "b", "c", "d", "e"}, values(t, r.client, "orders", 1))
	require.Empty(t, values(t, r.client, "orders", 0))

	// Each stored record carries the producer's identity: record i of a
	// request the request's sequence + i.
	recs, err := r.srv.Cluster().ReadCommitted("orders", 1, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	for i, rec := range recs {
		got, ok := envelope.ProducerOf(rec.Payload)
		require.True(t, ok, "record %d", i)
		require.Equal(t, envelope.Producer{ID: p.ProducerID, Sequence: int32(i)}, got, "record %d", i)
	}
}

// Sequence numbers wrap past the largest int32, as Kafka's do: a request
// whose first record is the last number continues from 0.
func TestAPIProducerSequenceWraps(t *testing.T) {
	require.Equal(t, int32(2147483647), envelope.SequenceAt(2147483646, 1))
	require.Equal(t, int32(0), envelope.SequenceAt(2147483647, 1))
	require.Equal(t, int32(1), envelope.SequenceAt(2147483647, 2))
	require.Equal(t, envelope.Producer{ID: 7, Epoch: 2, Sequence: 0}, producerAt(envelope.Producer{ID: 7, Epoch: 2, Sequence: 2147483647}, 1))
}

// The leader's refusals, each with its answer, nothing written: a gap is
// 409 out_of_order_sequence, an older epoch invalid_producer_epoch, a
// producer the partition does not know, not at 0, unknown_producer, a
// request older than the partition keeps offsets for duplicate_sequence.
func TestAPIProducerRefusals(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	newID := func() int64 {
		p, err := r.client.NewProducerID(ctx)
		require.NoError(t, err)
		return p.ProducerID
	}
	stored := func() int { return len(values(t, r.client, "orders", 0)) }

	id := newID()
	_, err = produceIdem(t, r.client, "orders", 0, id, 0, 0, "a", "b")
	require.NoError(t, err)
	before := stored()
	_, err = produceIdem(t, r.client, "orders", 0, id, 0, 5, "gap")
	e := apitest.APIErr(t, err, http.StatusConflict, CodeOutOfOrderSequence)
	require.Contains(t, e.Message, "expects sequence 2")
	require.ErrorIs(t, err, apiclient.ErrOutOfOrderSequence)
	require.ErrorIs(t, err, apiclient.ErrConflict)

	_, err = produceIdem(t, r.client, "orders", 0, newID(), 0, 3, "unknown")
	apitest.APIErr(t, err, http.StatusConflict, CodeUnknownProducer)
	require.ErrorIs(t, err, apiclient.ErrUnknownProducer)

	fenced := newID()
	_, err = produceIdem(t, r.client, "orders", 0, fenced, 1, 0, "epoch 1")
	require.NoError(t, err)
	before++
	_, err = produceIdem(t, r.client, "orders", 0, fenced, 0, 1, "epoch 0")
	apitest.APIErr(t, err, http.StatusConflict, CodeInvalidProducerEpoch)
	require.ErrorIs(t, err, apiclient.ErrInvalidProducerEpoch)

	// Six runs of one producer, another's record between each two: the
	// partition keeps the offsets of the last five, so the first sent
	// again was written, longer ago than it remembers where.
	old, other := newID(), newID()
	for i := range 6 {
		_, err = produceIdem(t, r.client, "orders", 0, old, 0, int32(i), fmt.Sprint("old ", i))
		require.NoError(t, err)
		_, err = produceIdem(t, r.client, "orders", 0, other, 0, int32(i), fmt.Sprint("other ", i))
		require.NoError(t, err)
	}
	before += 12
	_, err = produceIdem(t, r.client, "orders", 0, old, 0, 0, "old 0")
	e = apitest.APIErr(t, err, http.StatusConflict, CodeDuplicateSequence)
	require.Contains(t, e.Message, "count it written")
	require.ErrorIs(t, err, apiclient.ErrDuplicateSequence)

	require.Equal(t, before, stored(), "no refused request wrote anything")
}

// A request with bad producer fields, or without the partition its
// sequence numbers count in, is 400 and writes nothing.
func TestAPIProducerBadFieldsWriteNothing(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	rec := `"records":[{"value":"aGVsbG8="}]`
	for _, tc := range []struct{ query, body, want string }{
		{"", `{` + rec + `,"producer":{"id":1,"epoch":0,"sequence":0}}`, "needs the partition query parameter"},
		{"partition=0", `{` + rec + `,"producer":{"id":-1,"epoch":0,"sequence":0}}`, "producer.id -1"},
		{"partition=0", `{` + rec + `,"producer":{"id":1,"epoch":-1,"sequence":0}}`, "producer.epoch -1"},
		{"partition=0", `{` + rec + `,"producer":{"id":1,"epoch":32768,"sequence":0}}`, "producer.epoch 32768"},
		{"partition=0", `{` + rec + `,"producer":{"id":1,"epoch":0,"sequence":-1}}`, "producer.sequence -1"},
		{"partition=0", `{` + rec + `,"producer":{"id":1,"epoch":0,"sequence":2147483648}}`, "producer.sequence 2147483648"},
		{"partition=0", `{` + rec + `,"producer":{"id":1,"epoch":0}}`, "producer.sequence is required"},
		{"partition=0", `{` + rec + `,"producer":{"id":1,"epoch":0,"sequence":0,"seq":0}}`, "unknown field"},
	} {
		_, err := post(t, r.base+"/api/topics/orders/records?"+tc.query, "application/json", []byte(tc.body))
		e := apitest.APIErr(t, err, http.StatusBadRequest, CodeInvalidArgument)
		require.Contains(t, e.Message, tc.want, tc.body)
	}
	// The JSON form carries its producer in the body, never the query.
	_, err = post(t, r.base+"/api/topics/orders/records?partition=0&producer_id=1&producer_epoch=0&sequence=0", "application/json", []byte(`{`+rec+`}`))
	e := apitest.APIErr(t, err, http.StatusBadRequest, CodeInvalidArgument)
	require.Contains(t, e.Message, "a JSON body carries its keys and its producer")
	for _, q := range []string{
		"producer_id=1&producer_epoch=0&sequence=0",
		"partition=0&producer_id=1&producer_epoch=0",
		"partition=0&producer_id=-1&producer_epoch=0&sequence=0",
		"partition=0&producer_id=1&producer_epoch=0&sequence=x",
	} {
		_, err := post(t, r.base+"/api/topics/orders/records?"+q, "application/octet-stream", []byte("v"))
		apitest.APIErr(t, err, http.StatusBadRequest, CodeInvalidArgument)
	}
	require.Empty(t, values(t, r.client, "orders", 0))
}

// Every refusal of the leader's rule maps to its status and code in one
// place (classify), whether the error came from this process or, typed,
// from the leader's node; a batch sent again before its first write is on
// every active replica is 503 unavailable with Retry-After: retriable.
func TestAPIProducerErrorMapping(t *testing.T) {
	pe := func(rule string) error {
		return &cluster.ProducerError{Topic: "orders", Partition: 2, Producer: envelope.Producer{ID: 9, Epoch: 1, Sequence: 4}, Expected: 3, Rule: rule}
	}
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{pe(cluster.RuleOutOfOrder), http.StatusConflict, CodeOutOfOrderSequence},
		{pe(cluster.RuleDuplicate), http.StatusConflict, CodeDuplicateSequence},
		{pe(cluster.RuleInvalidEpoch), http.StatusConflict, CodeInvalidProducerEpoch},
		{pe(cluster.RuleUnknown), http.StatusConflict, CodeUnknownProducer},
		{pe(cluster.RuleInvalidBatch), http.StatusBadRequest, CodeInvalidProducerBatch},
		{fmt.Errorf("send: %w", pe(cluster.RuleOutOfOrder)), http.StatusConflict, CodeOutOfOrderSequence},
		{fmt.Errorf("remote: %w", cluster.ErrUnknownProducer), http.StatusConflict, CodeUnknownProducer},
		{&cluster.DuplicateNotCommittedError{Topic: "orders", Partition: 2, Producer: envelope.Producer{ID: 9, Sequence: 4}, HW: 3},
			http.StatusServiceUnavailable, CodeUnavailable},
	} {
		e := classify(tc.err)
		require.Equal(t, tc.status, e.status, "%v", tc.err)
		require.Equal(t, tc.code, e.body.Code, "%v", tc.err)
		require.True(t, errors.Is(e.cause, tc.err) || e.cause == tc.err)
		if strings.Contains(e.body.Message, "orders/2") {
			require.Contains(t, e.body.Message, "producer 9")
		}
	}
	w := httptest.NewRecorder()
	writeAPIError(w, classify(&cluster.DuplicateNotCommittedError{Topic: "orders", Partition: 2, Producer: envelope.Producer{ID: 9, Sequence: 4}, HW: 3}))
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	require.Equal(t, unavailableRetryAfter, w.Header().Get("Retry-After"))
	require.Contains(t, w.Body.String(), "send the same request again")
}

// failingIDs is a backend whose metadata store cannot reserve producer
// ids.
type failingIDs struct {
	backend.Data
	err error
}

func (f failingIDs) NewProducerID(context.Context) (int64, error) { return -1, f.err }

// A store that cannot reserve producer ids answers 503 with Retry-After,
// whatever its cause, and the client is told to ask again.
func TestAPIProducerNewIDUnavailable(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	s := openTestServer(t, defaults(), logger)
	for _, cause := range []error{
		fmt.Errorf("cluster: reserve producer ids: %w", cluster.ErrClosed),
		fmt.Errorf("cluster: reserve producer ids: write producer.ids: %w", io.ErrShortWrite),
	} {
		cfg := s.cfg
		cfg.Metrics = prometheus.NewRegistry()
		api, err := New(cfg,
			Backend{Data: failingIDs{Data: s.local, err: cause}, Admin: s.local, Operator: s.local})
		require.NoError(t, err)
		t.Cleanup(func() { _ = api.Close() })
		w := httptest.NewRecorder()
		api.handleNewProducer(w, apitest.LocalRequest(http.MethodPost, "/api/producers", nil))
		require.Equal(t, http.StatusServiceUnavailable, w.Code, w.Body.String())
		require.NotEmpty(t, w.Header().Get("Retry-After"))
		require.Contains(t, w.Body.String(), `"code":"unavailable"`)
	}
}

// A request sent again while its first write is on the leader only (a
// follower did not take it) is 503 unavailable with Retry-After — never
// written twice — and once every active replica holds it, the same
// request is answered with the offsets of that first write.
func TestAPIProducerRetryBeforeReplicated(t *testing.T) {
	r := startServer(t, t.TempDir(), 2, func(c *testConfig) { c.FailoverAfter = 0 })
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 2)
	require.NoError(t, err)
	d, err := r.client.Topic(ctx, "orders")
	require.NoError(t, err)
	follower := d.Partitions[0].Followers[0]
	p, err := r.client.NewProducerID(ctx)
	require.NoError(t, err)

	_, err = r.client.StopBroker(ctx, follower)
	require.NoError(t, err)
	_, err = produceIdem(t, r.client, "orders", 0, p.ProducerID, 0, 0, "a")
	apitest.APIErr(t, err, http.StatusServiceUnavailable, CodeUnavailable)
	resp, err := http.Post(r.base+"/api/topics/orders/records?partition=0", "application/json",
		strings.NewReader(fmt.Sprintf(`{"producer":{"id":%d,"epoch":0,"sequence":0},"records":[{"key":"aw==","value":"YQ=="}]}`, p.ProducerID)))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	eb := apitest.DecodeError(t, resp)
	require.Contains(t, eb.Message, "written before, but not yet by every active replica", "the leader holds it: not appended again")

	_, err = r.client.StartBroker(ctx, follower)
	require.NoError(t, err)
	_, err = r.client.CatchUp(ctx, "orders", 0, follower)
	require.NoError(t, err)
	res, err := produceIdem(t, r.client, "orders", 0, p.ProducerID, 0, 0, "a")
	require.NoError(t, err)
	require.Equal(t, []uint64{0}, offsets(res), "the offset of the first write")
	require.Equal(t, []string{"a"}, values(t, r.client, "orders", 0))
}
