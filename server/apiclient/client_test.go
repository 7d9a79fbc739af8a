package apiclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// seen is what the fake server recorded about one request.
type seen struct {
	Method, RawPath, Path, RawQuery, ContentType string
	Body                                         []byte
}

// fakeServer answers every request with status and body, recording the
// request. It mimics the contract's shapes, not its behaviour.
func fakeServer(t *testing.T, status int, body string) (*apiclient.Client, *seen) {
	t.Helper()
	var got seen
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		mu.Lock()
		got = seen{r.Method, r.URL.EscapedPath(), r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), b}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return apiclient.New(srv.URL + "/"), &got
}

func u64(v uint64) *uint64 { return &v }

// Contract: every endpoint's method, path and body shape
// (docs/phase-6-network-api.md § Endpoints, by way of a tour).
func TestAPIClientRequestShapes(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		call     func(c *apiclient.Client) error
		method   string
		rawPath  string
		rawQuery string
		body     string // expected JSON body, "" for none
	}{
		{"health", func(c *apiclient.Client) error { _, err := c.Health(ctx); return err }, "GET", "/api/health", "", ""},
		{"cluster", func(c *apiclient.Client) error { _, err := c.Cluster(ctx); return err }, "GET", "/api/cluster", "", ""},
		{"cluster nodes", func(c *apiclient.Client) error { _, err := c.ClusterNodes(ctx); return err }, "GET", "/api/cluster/nodes", "", ""},
		{"add node", func(c *apiclient.Client) error { _, err := c.AddNode(ctx, 4, "127.0.0.1:7004"); return err },
			"POST", "/api/cluster/nodes", "", `{"id":4,"addr":"127.0.0.1:7004"}`},
		{"remove node", func(c *apiclient.Client) error { _, err := c.RemoveNode(ctx, 4); return err }, "DELETE", "/api/cluster/nodes/4", "", ""},
		{"stop", func(c *apiclient.Client) error { _, err := c.StopBroker(ctx, 2); return err }, "POST", "/api/brokers/2/stop", "", ""},
		{"start", func(c *apiclient.Client) error { _, err := c.StartBroker(ctx, 3); return err }, "POST", "/api/brokers/3/start", "", ""},
		{"topics", func(c *apiclient.Client) error { _, err := c.Topics(ctx); return err }, "GET", "/api/topics", "", ""},
		{"create", func(c *apiclient.Client) error { _, _, err := c.CreateTopic(ctx, "orders", 3, 2); return err },
			"POST", "/api/topics", "", `{"name":"orders","partitions":3,"replication_factor":2}`},
		{"topic", func(c *apiclient.Client) error { _, err := c.Topic(ctx, "orders"); return err }, "GET", "/api/topics/orders", "", ""},
		{"delete topic", func(c *apiclient.Client) error { _, err := c.DeleteTopic(ctx, "orders"); return err }, "DELETE", "/api/topics/orders", "", ""},
		{"produce nil and empty key", func(c *apiclient.Client) error {
			_, err := c.Produce(ctx, "orders", []apiclient.ProduceRecord{
				{Key: nil, Value: []byte("a")}, {Key: []byte{}, Value: []byte{0xff, 0}}, {Key: []byte("k"), Value: nil},
			})
			return err
		}, "POST", "/api/topics/orders/records", "",
			`{"records":[{"key":null,"value":"YQ=="},{"key":"","value":"/wA="},{"key":"aw==","value":null}]}`},
		{"fetch", func(c *apiclient.Client) error { _, err := c.Fetch(ctx, "orders", 1, 42, 500); return err },
			"GET", "/api/topics/orders/partitions/1/records", "max=500&offset=42", ""},
		{"fetch default max", func(c *apiclient.Client) error { _, err := c.Fetch(ctx, "orders", 0, 0, 0); return err },
			"GET", "/api/topics/orders/partitions/0/records", "offset=0", ""},
		{"consumer offsets escaped", func(c *apiclient.Client) error { _, err := c.ConsumerOffsets(ctx, "team a/b?"); return err },
			"GET", "/api/consumers/team%20a%2Fb%3F/offsets", "", ""},
		{"consumer offset", func(c *apiclient.Client) error { _, err := c.ConsumerOffset(ctx, "c1", "orders", 2); return err },
			"GET", "/api/consumers/c1/offsets/orders/2", "", ""},
		{"commit", func(c *apiclient.Client) error { _, err := c.CommitOffset(ctx, "c1", "orders", 2, 7); return err },
			"PUT", "/api/consumers/c1/offsets/orders/2", "", `{"offset":7}`},
		{"reset", func(c *apiclient.Client) error { _, err := c.ResetOffset(ctx, "c1", "orders", 2, 0); return err },
			"POST", "/api/consumers/c1/offsets/orders/2/reset", "", `{"offset":0}`},
		{"failover", func(c *apiclient.Client) error { _, err := c.Failover(ctx, "orders", 0); return err },
			"POST", "/api/topics/orders/partitions/0/failover", "", ""},
		{"catch-up", func(c *apiclient.Client) error { _, err := c.CatchUp(ctx, "orders", 0, 2); return err },
			"POST", "/api/topics/orders/partitions/0/replicas/2/catch-up", "", ""},
		{"recover", func(c *apiclient.Client) error { _, err := c.Recover(ctx, "orders", 0, 1); return err },
			"POST", "/api/topics/orders/partitions/0/replicas/1/recover", "", ""},
		{"move-leader", func(c *apiclient.Client) error { _, err := c.MoveLeader(ctx, "orders", 3, 2); return err },
			"POST", "/api/topics/orders/partitions/3/replicas/2/move-leader", "", ""},
		{"journal", func(c *apiclient.Client) error { _, err := c.Journal(ctx, 17, 50); return err },
			"GET", "/api/journal", "max=50&since=17", ""},
		{"journal default max", func(c *apiclient.Client) error { _, err := c.Journal(ctx, 0, 0); return err },
			"GET", "/api/journal", "since=0", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, got := fakeServer(t, 200, `{}`)
			require.NoError(t, tc.call(c))
			require.Equal(t, tc.method, got.Method)
			require.Equal(t, tc.rawPath, got.RawPath)
			require.Equal(t, tc.rawQuery, got.RawQuery)
			if tc.body == "" {
				require.Empty(t, got.Body)
				return
			}
			require.Equal(t, "application/json", got.ContentType)
			require.JSONEq(t, tc.body, string(got.Body))
		})
	}
}

// Contract: an escaped name arrives as one path segment, decoded back to the
// original by the server.
func TestAPIClientEscapesNames(t *testing.T) {
	c, got := fakeServer(t, 200, `{}`)
	_, err := c.ConsumerOffset(context.Background(), "../x y", "t%2F", 0)
	require.NoError(t, err)
	require.Equal(t, "/api/consumers/..%2Fx%20y/offsets/t%252F/0", got.RawPath)
}

// Contract: the raw produce sends the value as the body and the key as
// key_b64; no key parameter means a null key.
func TestAPIClientProduceRaw(t *testing.T) {
	c, got := fakeServer(t, 200, `{"records":[{"partition":0,"offset":1,"timestamp":5,"leader":1,"brokers":[1]}]}`)
	res, err := c.ProduceRaw(context.Background(), "orders", []byte("k+/="), []byte{1, 2, 3})
	require.NoError(t, err)
	require.Equal(t, "application/octet-stream", got.ContentType)
	require.Equal(t, []byte{1, 2, 3}, got.Body)
	require.Equal(t, "key_b64=aysvPQ%3D%3D", got.RawQuery)
	require.Equal(t, uint64(1), res.Records[0].Offset)

	_, err = c.ProduceRaw(context.Background(), "orders", nil, []byte("v"))
	require.NoError(t, err)
	require.Empty(t, got.RawQuery)
}

// Contract: response shapes decode, byte strings from base64, null numbers
// as nil pointers.
func TestAPIClientDecodesResponses(t *testing.T) {
	ctx := context.Background()

	c, _ := fakeServer(t, 200, `{"name":"orders","partition_count":1,"replication_factor":2,"partitions":[
		{"partition":0,"leader":1,"leader_epoch":3,"preferred":2,"placement":[2,1],"assigned":[1,2],"followers":[2],"active":[1],"high_watermark":5,"log_end":6,
		 "replicas":[{"broker_id":1,"role":"leader","active":true,"available":true,"log_end":6,"lag":0},
		             {"broker_id":2,"role":"follower","active":false,"available":false,"log_end":null,"lag":null}]}]}`)
	td, err := c.Topic(ctx, "orders")
	require.NoError(t, err)
	p := td.Partitions[0]
	require.Equal(t, uint64(5), p.HighWatermark)
	require.Equal(t, uint64(3), p.LeaderEpoch)
	require.Equal(t, 2, p.Preferred)
	require.Equal(t, []int{2, 1}, p.Placement)
	require.Equal(t, u64(6), p.LogEnd)
	require.Equal(t, u64(0), p.Replicas[0].Lag)
	require.Nil(t, p.Replicas[1].LogEnd)
	require.Nil(t, p.Replicas[1].Lag)
	require.Equal(t, apiclient.RoleFollower, p.Replicas[1].Role)

	c, _ = fakeServer(t, 200, `{"records":[{"offset":3,"timestamp":17,"value":"aGVsbG8="},{"offset":4,"timestamp":18,"value":""}],
		"next_offset":5,"log_start":0,"high_watermark":5,"log_end":5}`)
	f, err := c.Fetch(ctx, "orders", 0, 3, 10)
	require.NoError(t, err)
	require.Equal(t, []byte("hello"), f.Records[0].Value)
	require.Empty(t, f.Records[1].Value)
	require.Equal(t, uint64(5), f.NextOffset)

	c, _ = fakeServer(t, 200, `{"consumer_id":"c","topic":"orders","partition":0,"offset":null}`)
	co, err := c.ConsumerOffset(ctx, "c", "orders", 0)
	require.NoError(t, err)
	require.Nil(t, co.Offset)

	c, _ = fakeServer(t, 200, `{"broker_id":1,"common_prefix":6,"dropped":0,"dropped_from":null,"dropped_to":null,"copied":2}`)
	rr, err := c.Recover(ctx, "orders", 0, 1)
	require.NoError(t, err)
	require.Nil(t, rr.DroppedFrom)
	require.Equal(t, uint64(2), rr.Copied)
	require.Empty(t, rr.Quarantine)

	c, _ = fakeServer(t, 200, `{"broker_id":1,"common_prefix":6,"dropped":1,"dropped_from":6,"dropped_to":7,
		"quarantine":"broker-000001/topics/orders/partition-000000/quarantine-6-7-1.bin","copied":2}`)
	rr, err = c.Recover(ctx, "orders", 0, 1)
	require.NoError(t, err)
	require.Equal(t, "broker-000001/topics/orders/partition-000000/quarantine-6-7-1.bin", rr.Quarantine)

	c, _ = fakeServer(t, 200, `{"old_leader":1,"new_leader":3,"leader_epoch":4,"log_end_offset":9,"copied":2}`)
	mv, err := c.MoveLeader(ctx, "orders", 0, 3)
	require.NoError(t, err)
	require.Equal(t, apiclient.MoveLeaderResponse{OldLeader: 1, NewLeader: 3, LeaderEpoch: 4, LogEndOffset: 9, Copied: 2}, *mv)

	c, _ = fakeServer(t, 200, `{"entries":[
		{"offset":7,"time":"2024-12-02T09:20:00.5Z","event":"broker-stop","phase":"done","by":"operator","broker":1,"summary":"broker 1 stopped"},
		{"offset":8,"time":"2024-12-02T09:20:01Z","event":"recover","phase":"done","by":"controller","topic":"orders","partition":0,
		 "broker":1,"summary":"s","reason":"r","intent":6,"quarantine":"q.bin","error":"e"}],"next":9}`)
	j, err := c.Journal(ctx, 7, 2)
	require.NoError(t, err)
	require.Equal(t, uint64(9), j.Next)
	require.Nil(t, j.Entries[0].Partition)
	require.Nil(t, j.Entries[0].Intent)
	zero := 0
	require.Equal(t, apiclient.JournalEntry{Offset: 8, Time: "2024-12-02T09:20:01Z", Event: "recover", Phase: "done", By: "controller",
		Topic: "orders", Partition: &zero, Broker: 1, Summary: "s", Reason: "r", Intent: u64(6), Quarantine: "q.bin", Error: "e"}, j.Entries[1])
}

// Contract: 201 for a new topic, 200 for the same settings again.
func TestAPIClientCreateTopicCreated(t *testing.T) {
	for _, status := range []int{http.StatusCreated, http.StatusOK} {
		c, _ := fakeServer(t, status, `{"name":"orders","partition_count":3,"replication_factor":2,"partitions":[]}`)
		td, created, err := c.CreateTopic(context.Background(), "orders", 3, 2)
		require.NoError(t, err)
		require.Equal(t, status == http.StatusCreated, created)
		require.Equal(t, 3, td.PartitionCount)
	}
}

// Contract "Errors": every code decodes to an *Error that matches its
// sentinel and carries the extras.
func TestAPIClientErrors(t *testing.T) {
	tests := []struct {
		status   int
		code     string
		sentinel error
	}{
		{400, "invalid_argument", apiclient.ErrInvalidArgument},
		{404, "not_found", apiclient.ErrNotFound},
		{405, "method_not_allowed", apiclient.ErrMethodNotAllowed},
		{409, "conflict", apiclient.ErrConflict},
		{413, "payload_too_large", apiclient.ErrPayloadTooLarge},
		{415, "unsupported_media_type", apiclient.ErrUnsupportedMediaType},
		{503, "unavailable", apiclient.ErrUnavailable},
		{500, "internal", apiclient.ErrInternal},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			c, _ := fakeServer(t, tc.status, `{"error":{"code":"`+tc.code+`","message":"it went wrong","broker_ids":[1,3],"committed":5,"requested":3,"high_watermark":4}}`)
			_, err := c.Health(context.Background())
			require.ErrorIs(t, err, tc.sentinel)
			var ae *apiclient.Error
			require.ErrorAs(t, err, &ae)
			require.Equal(t, tc.status, ae.Status)
			require.Equal(t, tc.code, ae.Code)
			require.Equal(t, "it went wrong", ae.Message)
			require.Equal(t, []int{1, 3}, ae.BrokerIDs)
			require.Equal(t, u64(5), ae.Committed)
			require.Equal(t, u64(3), ae.Requested)
			require.Equal(t, u64(4), ae.HighWatermark)
			for _, other := range tests {
				if other.code != tc.code {
					require.NotErrorIs(t, err, other.sentinel)
				}
			}
		})
	}
}

// Contract: a failed produce says, per record, which were acknowledged.
func TestAPIClientProducePartialFailure(t *testing.T) {
	c, _ := fakeServer(t, 503, `{"error":{"code":"unavailable","message":"leader of orders/1 unavailable","broker_ids":[2],
		"records":[{"partition":0,"offset":4,"timestamp":1,"leader":1,"brokers":[1,2]},{"error":{"code":"unavailable","message":"down"}}]}}`)
	_, err := c.Produce(context.Background(), "orders", []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}})
	var ae *apiclient.Error
	require.ErrorAs(t, err, &ae)
	require.ErrorIs(t, err, apiclient.ErrUnavailable)
	require.Len(t, ae.Records, 2)
	require.Nil(t, ae.Records[0].Error)
	require.Equal(t, uint64(4), ae.Records[0].Offset)
	require.Equal(t, "unavailable", ae.Records[1].Error.Code)
}

// A body that is not the envelope still gives an *Error with the status.
func TestAPIClientErrorNotEnvelope(t *testing.T) {
	c, _ := fakeServer(t, 502, `bad gateway`)
	_, err := c.Health(context.Background())
	var ae *apiclient.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 502, ae.Status)
	require.Empty(t, ae.Code)
	require.Equal(t, "bad gateway", ae.Message)
	require.NotErrorIs(t, err, apiclient.ErrInternal)
}

// Contract: an error carries the request id the server logged it under,
// from the body's request_id, else from the X-Request-Id header (a proxy's
// answer, say), and its text quotes it.
func TestAPIClientErrorRequestID(t *testing.T) {
	c, _ := fakeServer(t, 503, `{"error":{"code":"unavailable","message":"orders/0: leader broker 1 is unavailable","request_id":"4f1c9a0e2b7d3865"}}`)
	_, err := c.Health(context.Background())
	var ae *apiclient.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "4f1c9a0e2b7d3865", ae.RequestID)
	require.Equal(t, "apiclient: orders/0: leader broker 1 is unavailable (HTTP 503 unavailable, request 4f1c9a0e2b7d3865)", ae.Error())

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(apiclient.RequestIDHeader, "from-header")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "bad gateway")
	}))
	t.Cleanup(srv.Close)
	_, err = apiclient.New(srv.URL).Health(context.Background())
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "from-header", ae.RequestID)
	require.Equal(t, "apiclient: HTTP 502, request from-header: bad gateway", ae.Error())
}

// A 2xx body that is not JSON is reported, not silently zeroed.
func TestAPIClientUnexpectedBody(t *testing.T) {
	c, _ := fakeServer(t, 200, `<html>`)
	_, err := c.Cluster(context.Background())
	require.ErrorIs(t, err, apiclient.ErrUnexpectedResponse)
}

// Contract: an empty batch is refused before any request.
func TestAPIClientProduceEmpty(t *testing.T) {
	c, got := fakeServer(t, 200, `{}`)
	_, err := c.Produce(context.Background(), "orders", nil)
	require.ErrorIs(t, err, apiclient.ErrInvalidArgument)
	require.Empty(t, got.Method)
}

// Contract: connection refused is visible with errors.Is.
func TestAPIClientConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = apiclient.New("http://" + addr).Health(context.Background())
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
}

// Contract: the failed-record form encodes as {"error": ...} alone.
func TestAPIClientProduceResultJSON(t *testing.T) {
	b, err := json.Marshal([]apiclient.ProduceResult{
		{Partition: 1, Offset: 2, Timestamp: 3_000_001, TimestampMS: 3, Leader: 1, Brokers: []int{1}},
		{Error: &apiclient.RecordError{Code: "unavailable", Message: "down"}},
	})
	require.NoError(t, err)
	require.JSONEq(t, `[{"partition":1,"offset":2,"timestamp":3000001,"timestamp_ms":3,"leader":1,"brokers":[1]},{"error":{"code":"unavailable","message":"down"}}]`, string(b))
}

// The client is safe for concurrent use and reuses connections.
func TestAPIClientConcurrentKeepAlive(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"ok","service":"pystream"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := apiclient.New(srv.URL)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				h, err := c.Health(context.Background())
				if err == nil && h.Status != "ok" {
					err = errors.New("bad status " + h.Status)
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	// A dial that loses the race to a connection coming back idle still
	// joins the pool, so up to twice the workers may be dialled; without
	// reuse there would be one per request.
	require.LessOrEqual(t, conns.Load(), int64(2*workers), "connections are reused")
}
