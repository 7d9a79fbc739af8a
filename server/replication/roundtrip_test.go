package replication_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// Every round trip below goes through a real http.Server on loopback and
// NewClient(nil): the peer must see exactly what the client sent, the client
// must get exactly what the peer returned, and the request must travel over
// HTTP/2 without TLS (doc.go, "Transport").

// doc.go, "Requests": POST /v1/replicate carries the leader's epoch, id and
// high watermark in the query and the records as phase 1 frames; the answer
// is the follower's end. No records is a probe for that end.
func TestReplicationRoundTripReplicate(t *testing.T) {
	tests := []struct {
		name string
		req  replication.ReplicateRequest
		end  uint64
	}{
		{
			name: "records",
			req: replication.ReplicateRequest{
				Topic: "orders", Partition: 3, Epoch: 7, Leader: 2, HighWatermark: 40,
				Records: []log.Record{
					{Offset: 41, Timestamp: 1_700_000_000_000_000_000, Payload: []byte("one")},
					{Offset: 42, Timestamp: 1_700_000_000_000_000_001, Payload: []byte("two\x00\xff")},
					{Offset: 43, Timestamp: -1, Payload: bytes.Repeat([]byte{0xab}, 70_000)},
				},
			},
			end: 44,
		},
		{
			name: "empty payload",
			req: replication.ReplicateRequest{
				Topic: "t", Partition: 0, Epoch: 1, Leader: 0, HighWatermark: 0,
				Records: []log.Record{{Offset: 0, Timestamp: 5, Payload: []byte{}}, {Offset: 1, Timestamp: 6}},
			},
			end: 2,
		},
		{
			name: "probe",
			req:  replication.ReplicateRequest{Topic: "a topic/with?odd&chars", Partition: 1 << 30, Epoch: 1<<64 - 1, Leader: 9, HighWatermark: 1<<64 - 1},
			end:  17,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{replicate: replication.ReplicateResponse{End: tt.end}}
			n := serve(t, p)
			res, err := newClient(t).Replicate(t.Context(), n.Addr, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.End != tt.end {
				t.Errorf("end = %d, want %d", res.End, tt.end)
			}
			got := onlyCall(t, p, "Replicate").(replication.ReplicateRequest)
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

// doc.go, "Requests": GET /v1/records passes the committed flag through and
// answers frames plus the log's two ends in headers.
func TestReplicationRoundTripRecords(t *testing.T) {
	tests := []struct {
		name string
		req  replication.RecordsRequest
		res  replication.RecordsResponse
	}{
		{
			name: "committed",
			req:  replication.RecordsRequest{Topic: "orders", Partition: 2, From: 10, MaxBytes: 4096, Committed: true},
			res: replication.RecordsResponse{
				Records:       []log.Record{{Offset: 10, Timestamp: 100, Payload: []byte("x")}, {Offset: 11, Timestamp: 101, Payload: []byte{}}},
				LogStart:      9,
				LogEnd:        15,
				HighWatermark: 12,
			},
		},
		{
			name: "uncommitted",
			req:  replication.RecordsRequest{Topic: "orders", Partition: 0, From: 0, MaxBytes: 0},
			res: replication.RecordsResponse{
				Records:       []log.Record{{Offset: 0, Timestamp: 1, Payload: []byte("first")}},
				LogEnd:        1<<64 - 1,
				HighWatermark: 0,
			},
		},
		{
			name: "none",
			req:  replication.RecordsRequest{Topic: "empty", Partition: 5, From: 3, MaxBytes: 1, Committed: true},
			res:  replication.RecordsResponse{LogEnd: 3, HighWatermark: 3},
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
			if got := onlyCall(t, p, "Records").(replication.RecordsRequest); got != tt.req {
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

// doc.go, "Requests": GET /v1/offset-for-time asks a leader for the first
// offset at or after a time, in nanoseconds.
func TestReplicationRoundTripOffsetForTime(t *testing.T) {
	want := replication.OffsetForTimeResponse{Offset: 7, Found: true}
	p := &fakePeer{offTime: want}
	n := serve(t, p)
	req := replication.OffsetForTimeRequest{Topic: "orders", Partition: 1, Timestamp: 1733131200123456789}
	res, err := newClient(t).OffsetForTime(t.Context(), n.Addr, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := onlyCall(t, p, "OffsetForTime").(replication.OffsetForTimeRequest); got != req {
		t.Errorf("peer got %+v, want %+v", got, req)
	}
	if res != want {
		t.Errorf("answer %+v, want %+v", res, want)
	}
}

// doc.go, "Requests": POST /v1/produce forwards payloads as frames; the
// leader places every payload, in order (messages.go, ProduceResponse).
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
			want := replication.ProduceResponse{Brokers: []int{1, 2, 3}, Leader: 2}
			for i := range tt.payloads {
				want.Records = append(want.Records, replication.Placement{Offset: uint64(100 + i), Timestamp: int64(1000 + i)})
			}
			p := &fakePeer{produce: want}
			n := serve(t, p)
			req := replication.ProduceRequest{Topic: "orders", Partition: 4, Payloads: tt.payloads}
			res, err := newClient(t).Produce(t.Context(), n.Addr, req)
			if err != nil {
				t.Fatal(err)
			}
			got := onlyCall(t, p, "Produce").(replication.ProduceRequest)
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
// produce contract (messages.go, ProduceResponse: every payload, in order);
// the client refuses its answer.
func TestReplicationRoundTripProduceShortAnswer(t *testing.T) {
	p := &fakePeer{produce: replication.ProduceResponse{Records: []replication.Placement{{Offset: 1}}}}
	n := serve(t, p)
	_, err := newClient(t).Produce(t.Context(), n.Addr, replication.ProduceRequest{Topic: "t", Payloads: [][]byte{[]byte("a"), []byte("b")}})
	if !errors.Is(err, replication.ErrRemote) {
		t.Fatalf("err = %v, want ErrRemote", err)
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

// doc.go, "Requests": POST /v1/heartbeat carries a Heartbeat as JSON.
func TestReplicationRoundTripHeartbeat(t *testing.T) {
	end := uint64(12)
	tests := []struct {
		name string
		hb   replication.Heartbeat
	}{
		{"replicas", replication.Heartbeat{Node: 3, Replicas: []replication.ReplicaReport{
			{Topic: "orders", Partition: 0, LogEnd: &end, SyncedEpoch: 4, CaughtUp: true},
			{Topic: "orders", Partition: 1, SyncedEpoch: 2, Diverged: true, Error: "log: closed"},
		}}},
		{"no replicas", replication.Heartbeat{Node: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{}
			n := serve(t, p)
			if err := newClient(t).Heartbeat(t.Context(), n.Addr, tt.hb); err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Heartbeat").(replication.Heartbeat); !reflect.DeepEqual(got, tt.hb) {
				t.Errorf("peer got %+v, want %+v", got, tt.hb)
			}
		})
	}
}

// doc.go, "Requests": POST /v1/catch-up names the partition and the
// follower and answers the leader's end.
func TestReplicationRoundTripCatchUp(t *testing.T) {
	want := replication.CatchUpResponse{End: 99, Copied: 7}
	p := &fakePeer{catchUp: want}
	n := serve(t, p)
	res, err := newClient(t).CatchUp(t.Context(), n.Addr, "orders", 6, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := onlyCall(t, p, "CatchUp").(catchUpArgs); got != (catchUpArgs{Topic: "orders", Partition: 6, Follower: 2}) {
		t.Errorf("peer got %+v", got)
	}
	if res != want {
		t.Errorf("client got %+v, want %+v", res, want)
	}
}

// doc.go, "Transport": HTTP/2 keeps one persistent connection per pair of
// nodes and multiplexes every request on it.
func TestReplicationRoundTripOneConnection(t *testing.T) {
	p := &fakePeer{}
	n := serve(t, p)
	c := newClient(t)
	for i := range 5 {
		if _, err := c.Replicate(t.Context(), n.Addr, replication.ReplicateRequest{Topic: "t", Epoch: uint64(i)}); err != nil {
			t.Fatal(err)
		}
		if err := c.Heartbeat(t.Context(), n.Addr, replication.Heartbeat{Node: i}); err != nil {
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
