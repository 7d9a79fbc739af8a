package replication_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// Every round trip below goes through a real http.Server on loopback and
// NewClient(nil): the peer must see exactly what the client sent, the client
// must get exactly what the peer returned, and the request must travel over
// HTTP/2 without TLS (doc.go, "Transport").

// doc.go, "Requests": POST /v1/replicate carries the leader's epoch, id,
// high watermark, log start and flags in the query and the records as
// phase 1 frames; the answer is the follower's cluster.ReplicateResponse.
// No records is a probe for the follower's end.
func TestReplicationRoundTripReplicate(t *testing.T) {
	tests := []struct {
		name string
		req  cluster.ReplicateRequest
		res  cluster.ReplicateResponse
	}{
		{
			name: "records",
			req: cluster.ReplicateRequest{
				Topic: "orders", Partition: 3, Epoch: 7, Leader: 2, HighWatermark: 40, LogStart: 12,
				Records: []log.Record{
					{Offset: 41, Timestamp: 1_700_000_000_000_000_000, Payload: []byte("one")},
					{Offset: 42, Timestamp: 1_700_000_000_000_000_001, Payload: []byte("two\x00\xff")},
					{Offset: 43, Timestamp: -1, Payload: bytes.Repeat([]byte{0xab}, 70_000)},
				},
			},
			res: cluster.ReplicateResponse{End: 44, LogStart: 12},
		},
		{
			name: "empty payload",
			req: cluster.ReplicateRequest{
				Topic: "t", Partition: 0, Epoch: 1, Leader: 0, HighWatermark: 0,
				Records: []log.Record{{Offset: 0, Timestamp: 5, Payload: []byte{}}, {Offset: 1, Timestamp: 6}},
			},
			res: cluster.ReplicateResponse{End: 2},
		},
		{
			name: "probe",
			req:  cluster.ReplicateRequest{Topic: "a topic/with?odd&chars", Partition: 1 << 30, Epoch: 1<<64 - 1, Leader: 9, HighWatermark: 1<<64 - 1, LogStart: 1<<64 - 1},
			res:  cluster.ReplicateResponse{End: 17},
		},
		{
			name: "log start only, reset",
			req:  cluster.ReplicateRequest{Topic: "orders", Partition: 1, Epoch: 4, Leader: 3, HighWatermark: 90, LogStart: 80, LogStartOnly: true, Reset: true},
			res: cluster.ReplicateResponse{End: 80, LogStart: 80, Reset: true, ResetFrom: 55,
				Removed: []cluster.RemovedSegment{{Broker: 2, Base: 0, Next: 40}, {Broker: 2, Base: 40, Next: 55}}},
		},
		{
			name: "reopen",
			req: cluster.ReplicateRequest{Topic: "orders", Partition: 0, Epoch: 2, Leader: 1, HighWatermark: 3, Reopen: true,
				Records: []log.Record{{Offset: 3, Timestamp: 30, Payload: []byte("again")}}},
			res: cluster.ReplicateResponse{End: 4, Reopened: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{replicate: tt.res}
			n := serve(t, p)
			res, err := newClient(t).Replicate(t.Context(), n.Addr, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res, tt.res) {
				t.Errorf("client got %+v, want %+v", res, tt.res)
			}
			got := onlyCall(t, p, "Replicate").(cluster.ReplicateRequest)
			if !sameRecords(got.Records, tt.req.Records) {
				t.Errorf("peer got records %+v, want %+v", got.Records, tt.req.Records)
			}
			got.Records, tt.req.Records = nil, nil
			if !reflect.DeepEqual(got, tt.req) {
				t.Errorf("peer got %+v, want %+v", got, tt.req)
			}
		})
	}
}

// doc.go, "Requests": GET /v1/records passes the bounds and the committed
// flag through and answers frames plus the log's bounds in headers.
func TestReplicationRoundTripRecords(t *testing.T) {
	tests := []struct {
		name string
		req  cluster.RecordsRequest
		res  cluster.RecordsResponse
	}{
		{
			name: "committed",
			req:  cluster.RecordsRequest{Topic: "orders", Partition: 2, From: 10, MaxBytes: 4096, Committed: true},
			res: cluster.RecordsResponse{
				Records:       []log.Record{{Offset: 10, Timestamp: 100, Payload: []byte("x")}, {Offset: 11, Timestamp: 101, Payload: []byte{}}},
				LogStart:      9,
				LogEnd:        15,
				HighWatermark: 12,
			},
		},
		{
			name: "uncommitted",
			req:  cluster.RecordsRequest{Topic: "orders", Partition: 0, From: 0, MaxBytes: 0},
			res: cluster.RecordsResponse{
				Records:       []log.Record{{Offset: 0, Timestamp: 1, Payload: []byte("first")}},
				LogEnd:        1<<64 - 1,
				HighWatermark: 0,
			},
		},
		{
			name: "max records",
			req:  cluster.RecordsRequest{Topic: "orders", Partition: 7, From: 20, MaxBytes: 1 << 20, MaxRecords: 2},
			res: cluster.RecordsResponse{
				Records:       []log.Record{{Offset: 20, Timestamp: 7, Payload: []byte("a")}, {Offset: 21, Timestamp: 8, Payload: []byte("b")}},
				LogStart:      20,
				LogEnd:        30,
				HighWatermark: 29,
			},
		},
		{
			name: "none",
			req:  cluster.RecordsRequest{Topic: "empty", Partition: 5, From: 3, MaxBytes: 1, Committed: true},
			res:  cluster.RecordsResponse{LogStart: 3, LogEnd: 3, HighWatermark: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{records: tt.res}
			n := serve(t, p)
			res, err := newClient(t).Records(t.Context(), n.Addr, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Records").(cluster.RecordsRequest); got != tt.req {
				t.Errorf("peer got %+v, want %+v", got, tt.req)
			}
			if !sameRecords(res.Records, tt.res.Records) {
				t.Errorf("records = %+v, want %+v", res.Records, tt.res.Records)
			}
			if res.LogStart != tt.res.LogStart || res.LogEnd != tt.res.LogEnd || res.HighWatermark != tt.res.HighWatermark {
				t.Errorf("bounds = %d/%d/%d, want %d/%d/%d", res.LogStart, res.LogEnd, res.HighWatermark, tt.res.LogStart, tt.res.LogEnd, tt.res.HighWatermark)
			}
		})
	}
}

// doc.go, "Requests": GET /v1/digests names the range and the chunk in the
// query and answers one cluster.Digest per chunk, each as hexadecimal text
// (cluster.Digest.MarshalText), in order.
func TestReplicationRoundTripDigests(t *testing.T) {
	d1 := cluster.DigestRecords([]log.Record{{Offset: 0, Timestamp: 1, Payload: []byte("a")}})
	d2 := cluster.DigestRecords([]log.Record{{Offset: 4, Timestamp: 2, Payload: []byte("b")}})
	var ones cluster.Digest
	for i := range ones {
		ones[i] = 0xff
	}
	tests := []struct {
		name string
		req  cluster.DigestsRequest
		res  cluster.DigestsResponse
	}{
		{"chunks", cluster.DigestsRequest{Topic: "orders", Partition: 2, From: 0, To: 10, Chunk: 4},
			cluster.DigestsResponse{Digests: []cluster.Digest{d1, d2, ones}}},
		{"stops early", cluster.DigestsRequest{Topic: "orders", Partition: 0, From: 1 << 40, To: 1<<40 + 4096, Chunk: 1},
			cluster.DigestsResponse{Digests: []cluster.Digest{{}}}},
		{"none", cluster.DigestsRequest{Topic: "t", Partition: 1, From: 5, To: 5, Chunk: 1}, cluster.DigestsResponse{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{digests: tt.res}
			n := serve(t, p)
			res, err := newClient(t).Digests(t.Context(), n.Addr, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Digests").(cluster.DigestsRequest); got != tt.req {
				t.Errorf("peer got %+v, want %+v", got, tt.req)
			}
			if !reflect.DeepEqual(res, tt.res) {
				t.Errorf("client got %x, want %x", res.Digests, tt.res.Digests)
			}
		})
	}

	// On the wire each digest is its 64 hexadecimal digits.
	p := &fakePeer{digests: cluster.DigestsResponse{Digests: []cluster.Digest{d1, ones}}}
	n := serve(t, p)
	status, body := rawBody(t, http.MethodGet, "http://"+n.Addr+replication.PathDigests+"?"+digestsQuery, nil)
	var answer struct{ Digests []string }
	if err := json.Unmarshal(body, &answer); status != http.StatusOK || err != nil {
		t.Fatalf("status %d, body %s: %v", status, body, err)
	}
	if want := []string{hex.EncodeToString(d1[:]), hex.EncodeToString(ones[:])}; !reflect.DeepEqual(answer.Digests, want) {
		t.Errorf("digests on the wire = %q, want %q", answer.Digests, want)
	}
}

// client.go, Digests: an answer whose digest is not 64 hexadecimal digits
// (cluster.Digest.UnmarshalText) is an error, never a digest.
func TestReplicationRoundTripDigestsMalformedAnswer(t *testing.T) {
	good := hex.EncodeToString(make([]byte, 32))
	tests := []struct {
		name   string
		answer string
	}{
		{"short", `{"digests":["` + good[:62] + `"]}`},
		{"long", `{"digests":["` + good + `00"]}`},
		{"not hex", `{"digests":["` + good[:62] + `zz"]}`},
		{"space", `{"digests":[" ` + good[:63] + `"]}`},
		{"one bad of two", `{"digests":["` + good + `","x"]}`},
		{"number", `{"digests":[7]}`},
		{"bytes", `{"digests":[[0,1,2]]}`},
		{"not json", `digests: none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.answer))
			}))
			res, err := newClient(t).Digests(t.Context(), n.Addr, cluster.DigestsRequest{Topic: "t", To: 2, Chunk: 1})
			if err == nil {
				t.Fatalf("answer %s taken as %x", tt.answer, res.Digests)
			}
			if errors.Is(err, cluster.ErrBrokerUnavailable) {
				t.Errorf("a peer that answered is not unavailable: %v", err)
			}
		})
	}
}

// doc.go, "Requests": POST /v1/cut carries a cluster.CutRequest as JSON and
// answers the follower's cluster.CutResponse.
func TestReplicationRoundTripCut(t *testing.T) {
	tests := []struct {
		name string
		req  cluster.CutRequest
		res  cluster.CutResponse
	}{
		{"quarantine",
			cluster.CutRequest{Topic: "orders", Partition: 2, Epoch: 9, Leader: 3, To: 120, Quarantine: true,
				At: time.Date(2025, 3, 1, 12, 30, 0, 123456789, time.UTC)},
			cluster.CutResponse{From: 120, To: 125, Quarantine: "orders-2/quarantine-120-125.log", Path: "/var/lib/pystream/orders-2/quarantine-120-125.log"}},
		{"nothing to cut",
			cluster.CutRequest{Topic: "t", Partition: 0, Epoch: 1<<64 - 1, Leader: 1, To: 1<<64 - 1},
			cluster.CutResponse{From: 7, To: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{cut: tt.res}
			n := serve(t, p)
			res, err := newClient(t).Cut(t.Context(), n.Addr, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Cut").(cluster.CutRequest); !reflect.DeepEqual(got, tt.req) {
				t.Errorf("peer got %+v, want %+v", got, tt.req)
			}
			if res != tt.res {
				t.Errorf("client got %+v, want %+v", res, tt.res)
			}
		})
	}
}

// doc.go, "Requests": GET /v1/offset-for-time asks a leader for the first
// offset at or after a time, in nanoseconds; a time before the epoch is
// sent as 0 (client.go, OffsetForTime).
func TestReplicationRoundTripOffsetForTime(t *testing.T) {
	tests := []struct {
		name string
		req  cluster.OffsetForTimeRequest
		sent int64
		res  cluster.OffsetForTimeResponse
	}{
		{"found", cluster.OffsetForTimeRequest{Topic: "orders", Partition: 1, Timestamp: 1733131200123456789}, 1733131200123456789,
			cluster.OffsetForTimeResponse{Offset: 7, Found: true}},
		{"latest", cluster.OffsetForTimeRequest{Topic: "orders", Partition: 0, Timestamp: 1<<63 - 1}, 1<<63 - 1,
			cluster.OffsetForTimeResponse{Offset: 40}},
		{"before the epoch", cluster.OffsetForTimeRequest{Topic: "orders", Partition: 0, Timestamp: -5}, 0,
			cluster.OffsetForTimeResponse{Offset: 0, Found: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{offTime: tt.res}
			n := serve(t, p)
			res, err := newClient(t).OffsetForTime(t.Context(), n.Addr, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.req
			want.Timestamp = tt.sent
			if got := onlyCall(t, p, "OffsetForTime").(cluster.OffsetForTimeRequest); got != want {
				t.Errorf("peer got %+v, want %+v", got, want)
			}
			if res != tt.res {
				t.Errorf("answer %+v, want %+v", res, tt.res)
			}
		})
	}
}

// doc.go, "Requests": POST /v1/produce forwards payloads as frames; the
// leader places every payload, in order (cluster.ProduceResponse).
func TestReplicationRoundTripProduce(t *testing.T) {
	tests := []struct {
		name     string
		payloads [][]byte
	}{
		{"several", [][]byte{[]byte("a"), []byte("bb"), []byte("ccc")}},
		{"empty payload", [][]byte{[]byte("before"), {}, nil, []byte("after")}},
		{"one", [][]byte{[]byte(`{"json":true}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := cluster.ProduceResponse{Brokers: []int{1, 2, 3}, Leader: 2}
			for i := range tt.payloads {
				want.Records = append(want.Records, cluster.RecordPosition{Offset: uint64(100 + i), Timestamp: int64(1000 + i)})
			}
			p := &fakePeer{produce: want}
			n := serve(t, p)
			req := cluster.ProduceRequest{Topic: "orders", Partition: 4, Payloads: tt.payloads}
			res, err := newClient(t).Produce(t.Context(), n.Addr, req)
			if err != nil {
				t.Fatal(err)
			}
			got := onlyCall(t, p, "Produce").(cluster.ProduceRequest)
			if got.Topic != req.Topic || got.Partition != req.Partition || !samePayloads(got.Payloads, req.Payloads) {
				t.Errorf("peer got %+v, want %+v", got, req)
			}
			if !reflect.DeepEqual(res, want) {
				t.Errorf("client got %+v, want %+v", res, want)
			}
		})
	}
}

// A leader that places fewer records than it was sent has broken the
// produce contract (cluster.ProduceResponse: every payload, in order); the
// client refuses its answer.
func TestReplicationRoundTripProduceShortAnswer(t *testing.T) {
	p := &fakePeer{produce: cluster.ProduceResponse{Records: []cluster.RecordPosition{{Offset: 1}}}}
	n := serve(t, p)
	_, err := newClient(t).Produce(t.Context(), n.Addr, cluster.ProduceRequest{Topic: "t", Payloads: [][]byte{[]byte("a"), []byte("b")}})
	if !errors.Is(err, replication.ErrRemote) {
		t.Fatalf("err = %v, want ErrRemote", err)
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// doc.go, "Requests": POST /v1/operate carries a cluster.OperateRequest as
// JSON and answers a cluster.OperateResponse whose Result is the
// operation's own JSON, carried as the same JSON value.
func TestReplicationRoundTripOperate(t *testing.T) {
	epoch := uint64(12)
	tests := []struct {
		name   string
		req    cluster.OperateRequest
		result string
	}{
		{"catch-up", cluster.OperateRequest{Op: cluster.OperateCatchUp, Topic: "orders", Partition: 3, Broker: 2, Epoch: &epoch, By: "controller", Reason: "broker 2 is back"},
			`{"Topic":"orders","Partition":3,"Copied":17}`},
		{"failover", cluster.OperateRequest{Op: cluster.OperateFailover, Topic: "orders", Partition: 0, By: "operator"},
			`{ "NewLeader" : 3, "Epoch" : 13, "Note" : "<a & b>" }`},
		{"status", cluster.OperateRequest{Op: cluster.OperateStatus, Topic: "t"}, `[1,2,"three",null,{"x":[]}]`},
		{"reopen", cluster.OperateRequest{Op: cluster.OperateReopen, Broker: 4}, `"reopened"`},
		{"log-start", cluster.OperateRequest{Op: cluster.OperateLogStart, Topic: "orders", Partition: 1, Offset: 42, By: "operator", Reason: "Kafka DeleteRecords"},
			`{"Topic":"orders","Partition":1,"From":0,"To":42,"Removed":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{operate: cluster.OperateResponse{Result: json.RawMessage(tt.result)}}
			n := serve(t, p)
			res, err := newClient(t).Operate(t.Context(), n.Addr, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Operate").(cluster.OperateRequest); !reflect.DeepEqual(got, tt.req) {
				t.Errorf("peer got %+v, want %+v", got, tt.req)
			}
			if !sameJSON(t, res.Result, []byte(tt.result)) {
				t.Errorf("client got result %s, want %s", res.Result, tt.result)
			}
		})
	}
}

// doc.go, "Requests": POST /v1/propose carries an encoded cluster.MetaCommand
// and answers the encoded cluster.MetaResult, both opaque to the transport.
func TestReplicationRoundTripPropose(t *testing.T) {
	tests := []struct {
		name     string
		cmd, res []byte
	}{
		{"json", []byte(`{"op":"create-topic","name":"orders"}`), []byte(`{"ok":true}`)},
		{"binary", []byte{0, 1, 2, 0xff, '\n'}, []byte{0xfe, 0}},
		{"empty answer", []byte(`{}`), []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{propose: tt.res}
			n := serve(t, p)
			res, err := newClient(t).Propose(t.Context(), n.Addr, tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Propose").([]byte); !bytes.Equal(got, tt.cmd) {
				t.Errorf("peer got %q, want %q", got, tt.cmd)
			}
			if !bytes.Equal(res, tt.res) {
				t.Errorf("client got %q, want %q", res, tt.res)
			}
		})
	}
}

// doc.go, "Requests": POST /v1/heartbeat carries a Heartbeat as JSON and
// answers the controller's Observation of every broker.
func TestReplicationRoundTripHeartbeat(t *testing.T) {
	end := uint64(12)
	at := time.Date(2025, 3, 1, 12, 0, 0, 987654321, time.UTC)
	tests := []struct {
		name string
		hb   replication.Heartbeat
		obs  replication.Observation
	}{
		{"replicas",
			replication.Heartbeat{Node: 3, Replicas: []cluster.ReplicaReport{
				{Topic: "orders", Partition: 0, LogEnd: &end, HighWatermark: 11, At: at},
				{Topic: "orders", Partition: 1, HighWatermark: 4, Error: "log: closed", At: at},
			}},
			replication.Observation{Controller: 1, At: at.Add(time.Second), Brokers: []replication.BrokerSeen{
				{ID: 1, Available: true, LastSeen: at, Replicas: []cluster.ReplicaReport{{Topic: "orders", Partition: 0, LogEnd: &end, HighWatermark: 11, At: at}}},
				{ID: 2, Available: false, LastSeen: at.Add(-time.Minute)},
				{ID: 3, Available: true, LastSeen: at},
			}}},
		{"no replicas", replication.Heartbeat{Node: 1}, replication.Observation{Controller: 1, At: at}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{observe: tt.obs}
			n := serve(t, p)
			obs, err := newClient(t).Heartbeat(t.Context(), n.Addr, tt.hb)
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Heartbeat").(replication.Heartbeat); !reflect.DeepEqual(got, tt.hb) {
				t.Errorf("peer got %+v, want %+v", got, tt.hb)
			}
			if !reflect.DeepEqual(obs, tt.obs) {
				t.Errorf("client got %+v, want %+v", obs, tt.obs)
			}
		})
	}
}

// doc.go, "Transport": HTTP/2 keeps one persistent connection per pair of
// nodes and multiplexes every request on it.
func TestReplicationRoundTripOneConnection(t *testing.T) {
	p := &fakePeer{}
	n := serve(t, p)
	c := newClient(t)
	for i := range 5 {
		if _, err := c.Replicate(t.Context(), n.Addr, cluster.ReplicateRequest{Topic: "t", Epoch: uint64(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Heartbeat(t.Context(), n.Addr, replication.Heartbeat{Node: i}); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Conns(); got != 1 {
		t.Errorf("10 requests arrived on %d connections, want 1", got)
	}
	for _, c := range p.Calls() {
		if c.Proto != 2 {
			t.Errorf("%s arrived over HTTP/%d, want HTTP/2", c.Method, c.Proto)
		}
	}
}

// doc.go, "Requests": POST /v1/membership carries a MembershipRequest as
// JSON, addition or removal.
func TestReplicationRoundTripMembership(t *testing.T) {
	for _, req := range []replication.MembershipRequest{
		{Op: replication.MembershipAdd, ID: 4, Addr: "127.0.0.1:7004"},
		{Op: replication.MembershipRemove, ID: 2},
	} {
		t.Run(req.Op, func(t *testing.T) {
			p := &fakePeer{}
			n := serve(t, p)
			if err := newClient(t).Membership(t.Context(), n.Addr, req); err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Membership").(replication.MembershipRequest); got != req {
				t.Errorf("peer got %+v, want %+v", got, req)
			}
		})
	}
}
