package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/topic/envelope"
)

// Tests of limits.go, one per limit of docs/phase-6-network-api.md (the
// memory tests are in limits_memory_test.go).

func TestLimitsCountItems(t *testing.T) {
	tests := []struct {
		data string
		want int
	}{
		{`{"records":[]}`, 0},
		{`{"records":[{"value":""}]}`, 1},
		{`{"records":[{"value":"a,b"},{"value":"[]"},{"key":null,"value":""}]}`, 3},
		{` { "x" : [1,2,3] , "Records" : [ 1 , [2,3] , {"a":[4,5]} ] } `, 3},
		{`{"rec\u006frds":[1,2]}`, 2}, // an escaped key counts
		{`{"other":{"records":[1,2,3]}}`, 0},
		{`{"records":[1,2`, 2}, // malformed: some count, the decoder says why
		{`[1,2,3]`, 0},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, countItems([]byte(tt.data), "records", 100), tt.data)
	}
	require.Equal(t, 3, countItems([]byte(`{"records":[1,2,3,4,5]}`), "records", 2), "stops past the limit")
}

func TestLimitsQuoted(t *testing.T) {
	require.Equal(t, `"orders"`, quoted("orders"))
	long := strings.Repeat("é", 1<<19) // 1 MiB of two-byte runes
	q := quoted(long)
	require.Less(t, len(q), 200)
	require.True(t, strings.HasSuffix(q, "… (1048576 bytes)"), q)
}

// A megabyte-long name or value is never echoed back in full: path
// wildcards, query keys and values, JSON keys, numbers and names.
func TestLimitsLongNamesCutInErrors(t *testing.T) {
	s, logs := newTestServer(t, defaults())
	long := strings.Repeat("a", 1<<20)
	cases := []struct {
		method, target, body string
	}{
		{http.MethodGet, "/api/topics/" + long, ""},
		{http.MethodGet, "/api/topics/" + long + "!", ""},
		{http.MethodGet, "/api/topics/orders/partitions/" + long + "/records", ""},
		{http.MethodGet, "/api/topics/orders/partitions/0/records?" + long + "=1", ""},
		{http.MethodGet, "/api/topics/orders/partitions/0/records?offset=" + long, ""},
		{http.MethodGet, "/api/nope/" + long, ""},
		{http.MethodPost, "/api/topics", `{"name":"` + long + `","partitions":1,"replication_factor":1}`},
		{http.MethodPost, "/api/topics", `{"` + long + `":1}`},
		{http.MethodPost, "/api/topics", `{"name":"x","partitions":1` + strings.Repeat("0", 1<<19) + `,"replication_factor":1}`},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		require.GreaterOrEqual(t, rec.Code, 400, "%.60s", c.target)
		require.Less(t, rec.Body.Len(), 2048, "%s %.60s: %.300s", c.method, c.target, rec.Body.String())
	}
	require.Less(t, logs.Len(), 64<<10, "the log lines carry no long name either")
}

// One produce request carries at most PYSTREAM_MAX_REQUEST_RECORDS
// records, counted before the body is decoded.
func TestLimitsRecordsPerRequest(t *testing.T) {
	r := startServer(t, t.TempDir(), 1, func(c *testConfig) { c.MaxRequestRecords = 10 })
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	recs := make([]apiclient.ProduceRecord, 10)
	for i := range recs {
		recs[i].Value = []byte("v")
	}
	_, err = r.client.Produce(ctx, "orders", recs)
	require.NoError(t, err, "the limit itself is accepted")
	_, err = r.client.Produce(ctx, "orders", append(recs, apiclient.ProduceRecord{Value: []byte("v")}))
	e := apitest.APIErr(t, err, http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
	require.Contains(t, e.Message, "PYSTREAM_MAX_REQUEST_RECORDS")
	require.Contains(t, e.Message, "10")
}

// A million empty records fit in a 13 MB body; decoding and writing them
// took 530 MB and stalled the server. At the default limit the request is
// refused after a byte scan.
func TestLimitsMillionEmptyRecordsRefused(t *testing.T) {
	r := startServer(t, t.TempDir(), 1, func(c *testConfig) { c.MaxRequestBytes = 16 << 20 })
	_, _, err := r.client.CreateTopic(t.Context(), "orders", 1, 1)
	require.NoError(t, err)
	body := []byte(`{"records":[` + strings.Repeat(`{"value":""},`, 1_000_000-1) + `{"value":""}]}`)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	resp, err := http.Post(r.base+"/api/topics/orders/records", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("1,000,000 empty records (%d bytes): %d in %v, %d MiB allocated", len(body), resp.StatusCode, elapsed, allocated>>20)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Less(t, allocated, uint64(96<<20), "the body and little else")
}

// Past PYSTREAM_MAX_INFLIGHT_BYTES a request with a body is answered 503
// with Retry-After before its body is read; one without a body is served.
func TestLimitsInflight(t *testing.T) {
	r := startServer(t, t.TempDir(), 1, func(c *testConfig) {
		c.MaxRequestBytes = 1 << 20
		c.MaxInflightBytes = MinInflightBytes
	})
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	addr := r.base[len("http://"):]
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /api/topics/orders/records HTTP/1.1\r\nHost: %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\nx", addr, 1<<20)
	require.NoError(t, err)
	waitFor(t, 5*time.Second, func() bool { return r.srv.inflight.Reserved() == 1<<20 }, "the stalled body to be in flight")

	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("v")}})
	e := apitest.APIErr(t, err, http.StatusServiceUnavailable, CodeUnavailable)
	require.Contains(t, e.Message, "PYSTREAM_MAX_INFLIGHT_BYTES")
	resp, err := http.Post(r.base+"/api/topics/orders/records", "application/octet-stream", strings.NewReader("v"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	_, err = r.client.Fetch(ctx, "orders", 0, 0, 1)
	require.NoError(t, err, "a request without a body is not held back")

	c.Close()
	waitFor(t, 5*time.Second, func() bool { return r.srv.inflight.Reserved() == 0 }, "the reservation to be released")
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("v")}})
	require.NoError(t, err)
}

// Request headers are bounded (MaxHeaderBytes): net/http answers 431.
func TestLimitsMaxHeaderBytes(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	req, err := http.NewRequest(http.MethodGet, r.base+"/api/health", nil)
	require.NoError(t, err)
	req.Header.Set("X-Big", strings.Repeat("a", 2*MaxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

// A body in a Content-Encoding other than identity is refused, not stored
// as it came.
func TestLimitsContentEncoding(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	_, _, err := r.client.CreateTopic(t.Context(), "orders", 1, 1)
	require.NoError(t, err)
	for enc, want := range map[string]int{"gzip": 415, "identity": 200, "br, identity": 415, "": 200} {
		req, err := http.NewRequest(http.MethodPost, r.base+"/api/topics/orders/records", strings.NewReader("\x1f\x8b"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/octet-stream")
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, enc)
	}
}

// max_bytes bounds an answer's values (at least one record), is capped by
// PYSTREAM_FETCH_MAX_BYTES, and must be from 1.
func TestLimitsFetchMaxBytes(t *testing.T) {
	r := startServer(t, t.TempDir(), 1, func(c *testConfig) { c.FetchMaxBytes = 8 << 10 })
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	for range 10 {
		_, err := r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: make([]byte, 1024)}})
		require.NoError(t, err)
	}
	for maxBytes, want := range map[int]int{1: 1, 1024: 1, 1025: 2, 3000: 3, 1 << 40: 8, 0: 8} {
		out, err := r.client.FetchBytes(ctx, "orders", 0, 0, 1000, maxBytes)
		require.NoError(t, err, maxBytes)
		require.Len(t, out.Records, want, "max_bytes=%d", maxBytes)
		require.Equal(t, uint64(want), out.NextOffset)
	}
	resp, err := http.Get(r.base + "/api/topics/orders/partitions/0/records?max_bytes=0")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// The streamed answer is byte for byte what json.Marshal writes.
func TestLimitsFetchEncoderMatchesJSON(t *testing.T) {
	for _, recs := range [][]log.Record{
		nil,
		{{Offset: 7, Timestamp: 1733131200123456789, Payload: nil}},
		{{Offset: 0, Timestamp: -5, Payload: []byte("hello")}, {Offset: 1, Timestamp: 1, Payload: bytes.Repeat([]byte{0xff, 1, 2, 3}, 5000)}},
		{
			{Offset: 2, Timestamp: 3, Payload: envelope.Encode(envelope.Record{Key: []byte("user-123"), Value: []byte("v")})},
			{Offset: 3, Timestamp: 4, Payload: envelope.Encode(envelope.Record{Key: []byte{}, Timestamp: 1700000000000, HasTimestamp: true,
				Headers: []envelope.Header{{Key: "a<b>&\"c\"", Value: []byte("x")}, {Key: "", Value: nil}, {Key: "e", Value: []byte{}}}})},
			{Offset: 4, Timestamp: 5, Payload: envelope.Encode(envelope.Record{Value: bytes.Repeat([]byte{7}, 20000)})},
			{Offset: 5, Timestamp: 6, Payload: []byte(envelope.Magic + "not an envelope")},
		},
		{ // an idempotent record, a transactional one, both markers
			{Offset: 6, Timestamp: 7, Payload: envelope.Encode(envelope.Record{Key: []byte("k"), Value: []byte("once"),
				HasProducer: true, Producer: envelope.Producer{ID: 1000, Epoch: 2, Sequence: math.MaxInt32}})},
			{Offset: 7, Timestamp: 8, Payload: envelope.Encode(envelope.Record{Value: []byte("in a txn"), HasTimestamp: true, Timestamp: 9,
				HasProducer: true, Producer: envelope.Producer{ID: math.MaxInt64, Epoch: math.MaxInt16}, Transactional: true,
				Headers: []envelope.Header{{Key: "h", Value: []byte("v")}}})},
			{Offset: 8, Timestamp: 9, Payload: cluster.MarkerPayload(1001, 0, true, 1)},
			{Offset: 9, Timestamp: 10, Payload: cluster.MarkerPayload(1001, 1, false, 2)},
		},
	} {
		var buf bytes.Buffer
		enc := newFetchEncoder(&buf)
		enc.begin()
		want := apiclient.FetchResponse{Records: []apiclient.FetchedRecord{}, NextOffset: 9, HighWatermark: 10, LogEnd: 11}
		for _, rec := range recs {
			enc.record(rec)
			fr := apiclient.FetchedRecord{Offset: rec.Offset, Timestamp: rec.Timestamp, TimestampMS: unixMillis(rec.Timestamp), Value: rec.Payload}
			if r, err := envelope.Parse(rec.Payload); err == nil {
				fr.Key, fr.Value = r.Key, r.Value
				if r.HasTimestamp {
					fr.CreateTimestampMS = &r.Timestamp
				}
				if r.HasProducer {
					fr.Producer = &apiclient.ProducerIdentity{ID: r.Producer.ID, Epoch: r.Producer.Epoch, Sequence: r.Producer.Sequence}
				}
				fr.Transactional = r.Transactional
				if r.Marker != envelope.NoMarker {
					fr.Marker = r.Marker.String()
				}
				for _, h := range r.Headers {
					fr.Headers = append(fr.Headers, apiclient.RecordHeader{Key: h.Key, Value: h.Value})
				}
			} else if fr.Value == nil {
				fr.Value = []byte{}
			}
			// The answers built whole (a quarantine's records) say the same.
			require.Equal(t, fr, fetchedRecordOf(rec))
			want.Records = append(want.Records, fr)
		}
		enc.end(9, fetchTail{hwm: 10, logEnd: 11})
		require.NoError(t, enc.err)
		wantJSON, err := json.Marshal(want)
		require.NoError(t, err)
		require.Equal(t, string(wantJSON)+"\n", buf.String())
	}
}

// docs/security.md § Limits: the token is checked before a body's bytes
// are reserved, so a caller without one cannot fill the in-flight budget:
// with the budget full, it is told 401, not 503, and holds nothing.
func TestLimitsInflightAfterAuth(t *testing.T) {
	cfg := defaults()
	cfg.AuthFile = writeAuthFile(t)
	cfg.MaxRequestBytes = 1 << 20
	cfg.MaxInflightBytes = MinInflightBytes
	s, _ := newTestServer(t, cfg)
	require.NoError(t, s.Cluster().CreateTopic("orders", 1, 1))
	require.True(t, s.inflight.Acquire(MinInflightBytes), "the budget is full")
	defer s.inflight.Release(MinInflightBytes)
	r := apitest.LocalRequest(http.MethodPost, "/api/topics/orders/records", strings.NewReader("v"))
	r.Header.Set("Content-Type", mediaOctetStream)
	rec := serve(s, r)
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	r = apitest.LocalRequest(http.MethodPost, "/api/topics/orders/records", strings.NewReader("v"))
	r.Header.Set("Content-Type", mediaOctetStream)
	r.Header.Set("Authorization", "Bearer "+tokenWrite)
	rec = serve(s, r)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, "a token holder meets the full budget: %s", rec.Body.String())
}
