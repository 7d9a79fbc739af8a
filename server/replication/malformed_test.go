package replication_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// frames renders records in phase 1's frame format.
func frames(recs ...log.Record) []byte {
	var b []byte
	for _, r := range recs {
		b = log.AppendFrame(b, r)
	}
	return b
}

func rec(offset uint64, payload string) log.Record {
	return log.Record{Offset: offset, Timestamp: int64(offset) * 10, Payload: []byte(payload)}
}

// The well-formed form of every request, which the malformed cases below
// break one part at a time.
const (
	replicateQuery  = "topic=t&partition=0&epoch=1&leader=1&hw=0&log_start=0"
	recordsQuery    = "topic=t&partition=0&from=0&max_bytes=100"
	digestsQuery    = "topic=t&partition=0&from=0&to=10&chunk=4"
	produceQuery    = "topic=t&partition=0"
	offsetTimeQuery = "topic=t&partition=0&ts=0"
)

// The well-formed JSON bodies.
var (
	cutBody        = []byte(`{"topic":"t","partition":0,"epoch":1,"leader":1,"to":3}`)
	operateBody    = []byte(`{"op":"status","topic":"t","partition":0}`)
	heartbeatBody  = []byte(`{"node":1}`)
	membershipBody = []byte(`{"op":"add","id":2,"addr":"127.0.0.1:7002"}`)
)

type request struct {
	name   string
	method string
	path   string
	query  string
	body   []byte
}

// The malformed cases are only meaningful if their well-formed originals
// reach the peer: this pins the originals.
func TestReplicationMalformedBaseline(t *testing.T) {
	tests := []request{
		{"replicate", http.MethodPost, replication.PathReplicate, replicateQuery, frames(rec(4, "a"), rec(5, ""))},
		{"replicate probe", http.MethodPost, replication.PathReplicate, replicateQuery, nil},
		{"replicate largest numbers", http.MethodPost, replication.PathReplicate,
			"topic=t&partition=2147483647&epoch=18446744073709551615&leader=2147483647&hw=18446744073709551615&log_start=18446744073709551615", nil},
		{"replicate flags", http.MethodPost, replication.PathReplicate, replicateQuery + "&log_start_only=1&reset=1&reopen=1", nil},
		{"records", http.MethodGet, replication.PathRecords, recordsQuery, nil},
		{"records max_records committed", http.MethodGet, replication.PathRecords, recordsQuery + "&max_records=3&committed=1", nil},
		{"digests", http.MethodGet, replication.PathDigests, digestsQuery, nil},
		{"digests empty range", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=7&to=7&chunk=1", nil},
		{"digests most chunks", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=10&to=4106&chunk=1", nil},
		{"cut", http.MethodPost, replication.PathCut, "", cutBody},
		{"produce", http.MethodPost, replication.PathProduce, produceQuery, frames(rec(0, "a"), rec(0, "b"))},
		{"offset-for-time", http.MethodGet, replication.PathOffsetTime, offsetTimeQuery, nil},
		{"offset-for-time latest", http.MethodGet, replication.PathOffsetTime, "topic=t&partition=0&ts=9223372036854775807", nil},
		{"operate", http.MethodPost, replication.PathOperate, "", operateBody},
		{"propose", http.MethodPost, replication.PathPropose, "", []byte(`{}`)},
		{"heartbeat", http.MethodPost, replication.PathHeartbeat, "", heartbeatBody},
		{"membership", http.MethodPost, replication.PathMembership, "", membershipBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{}
			n := serve(t, p)
			status, e := raw(t, tt.method, "http://"+n.Addr+tt.path+"?"+tt.query, bytes.NewReader(tt.body))
			if status != http.StatusOK || e != nil {
				t.Fatalf("status %d, refusal %+v; want 200", status, e)
			}
			if calls := p.Calls(); len(calls) != 1 {
				t.Fatalf("peer saw %d calls, want 1", len(calls))
			}
		})
	}
}

// handler.go, NewHandler: malformed requests are refused with
// CodeBadRequest and never reach the peer; records must be whole frames
// (messages.go, decodeFrames) with consecutive offsets (ReplicateRequest).
func TestReplicationMalformedRefused(t *testing.T) {
	valid := frames(rec(4, "abc"), rec(5, "de"))
	disagree := frames(rec(0, "abc"))
	binary.BigEndian.PutUint32(disagree[0:4], 99) // record_length no longer matches payload_length
	huge := frames(rec(0, ""))
	binary.BigEndian.PutUint32(huge[0:4], math.MaxUint32)
	binary.BigEndian.PutUint32(huge[20:24], math.MaxUint32-20) // consistent, but far past the body

	tests := []request{
		// Bodies of replicate.
		{"replicate cut frame", http.MethodPost, replication.PathReplicate, replicateQuery, valid[:len(valid)-1]},
		{"replicate cut header", http.MethodPost, replication.PathReplicate, replicateQuery, valid[:log.HeaderSize-1]},
		{"replicate garbage", http.MethodPost, replication.PathReplicate, replicateQuery, []byte("these are not frames at all, just words")},
		{"replicate frames then garbage", http.MethodPost, replication.PathReplicate, replicateQuery, append(append([]byte{}, valid...), 0xde, 0xad)},
		{"replicate lengths disagree", http.MethodPost, replication.PathReplicate, replicateQuery, disagree},
		{"replicate huge length", http.MethodPost, replication.PathReplicate, replicateQuery, huge},
		{"replicate offsets skip", http.MethodPost, replication.PathReplicate, replicateQuery, frames(rec(4, "a"), rec(6, "b"))},
		{"replicate offsets repeat", http.MethodPost, replication.PathReplicate, replicateQuery, frames(rec(4, "a"), rec(4, "b"))},
		{"replicate offsets go back", http.MethodPost, replication.PathReplicate, replicateQuery, frames(rec(4, "a"), rec(5, "b"), rec(3, "c"))},
		{"replicate offsets wrap", http.MethodPost, replication.PathReplicate, replicateQuery, frames(rec(math.MaxUint64, "a"), rec(0, "b"))},
		// Queries of replicate.
		{"replicate no topic", http.MethodPost, replication.PathReplicate, "partition=0&epoch=1&leader=1&hw=0", nil},
		{"replicate empty topic", http.MethodPost, replication.PathReplicate, "topic=&partition=0&epoch=1&leader=1&hw=0", nil},
		{"replicate no partition", http.MethodPost, replication.PathReplicate, "topic=t&epoch=1&leader=1&hw=0", nil},
		{"replicate negative partition", http.MethodPost, replication.PathReplicate, "topic=t&partition=-1&epoch=1&leader=1&hw=0", nil},
		{"replicate partition past int32", http.MethodPost, replication.PathReplicate, "topic=t&partition=2147483648&epoch=1&leader=1&hw=0", nil},
		{"replicate partition past uint64", http.MethodPost, replication.PathReplicate, "topic=t&partition=18446744073709551616&epoch=1&leader=1&hw=0", nil},
		{"replicate no epoch", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&leader=1&hw=0", nil},
		{"replicate word epoch", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=one&leader=1&hw=0", nil},
		{"replicate signed epoch", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=+1&leader=1&hw=0", nil},
		{"replicate hex epoch", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=0x1&leader=1&hw=0", nil},
		{"replicate no leader", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=1&hw=0", nil},
		{"replicate negative leader", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=1&leader=-2&hw=0", nil},
		{"replicate no hw", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=1&leader=1", nil},
		{"replicate fractional hw", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=1&leader=1&hw=1.5", nil},
		{"replicate no log_start", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=1&leader=1&hw=0", nil},
		{"replicate negative log_start", http.MethodPost, replication.PathReplicate, "topic=t&partition=0&epoch=1&leader=1&hw=0&log_start=-1", nil},
		// Records.
		{"records no topic", http.MethodGet, replication.PathRecords, "partition=0&from=0&max_bytes=100", nil},
		{"records word partition", http.MethodGet, replication.PathRecords, "topic=t&partition=zero&from=0&max_bytes=100", nil},
		{"records no from", http.MethodGet, replication.PathRecords, "topic=t&partition=0&max_bytes=100", nil},
		{"records negative from", http.MethodGet, replication.PathRecords, "topic=t&partition=0&from=-5&max_bytes=100", nil},
		{"records no max_bytes", http.MethodGet, replication.PathRecords, "topic=t&partition=0&from=0", nil},
		{"records negative max_bytes", http.MethodGet, replication.PathRecords, "topic=t&partition=0&from=0&max_bytes=-1", nil},
		{"records negative max_records", http.MethodGet, replication.PathRecords, recordsQuery + "&max_records=-1", nil},
		{"records word max_records", http.MethodGet, replication.PathRecords, recordsQuery + "&max_records=ten", nil},
		{"records max_records past int32", http.MethodGet, replication.PathRecords, recordsQuery + "&max_records=2147483648", nil},
		// Digests.
		{"digests no topic", http.MethodGet, replication.PathDigests, "partition=0&from=0&to=10&chunk=4", nil},
		{"digests no from", http.MethodGet, replication.PathDigests, "topic=t&partition=0&to=10&chunk=4", nil},
		{"digests no to", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=0&chunk=4", nil},
		{"digests word to", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=0&to=ten&chunk=4", nil},
		{"digests no chunk", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=0&to=10", nil},
		{"digests zero chunk", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=0&to=10&chunk=0", nil},
		{"digests negative chunk", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=0&to=10&chunk=-4", nil},
		{"digests chunk past int32", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=0&to=10&chunk=2147483648", nil},
		{"digests range backwards", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=10&to=9&chunk=1", nil},
		{"digests too many chunks", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=10&to=4107&chunk=1", nil},
		{"digests whole log", http.MethodGet, replication.PathDigests, "topic=t&partition=0&from=0&to=18446744073709551615&chunk=2147483647", nil},
		// Cut.
		{"cut garbage", http.MethodPost, replication.PathCut, "", []byte("cut it all")},
		{"cut wrong type", http.MethodPost, replication.PathCut, "", []byte(`{"topic":"t","to":"three"}`)},
		{"cut negative to", http.MethodPost, replication.PathCut, "", []byte(`{"topic":"t","to":-1}`)},
		{"cut bad time", http.MethodPost, replication.PathCut, "", []byte(`{"topic":"t","to":3,"at":"yesterday"}`)},
		{"cut trailing data", http.MethodPost, replication.PathCut, "", append(append([]byte{}, cutBody...), "{}"...)},
		{"cut empty", http.MethodPost, replication.PathCut, "", nil},
		// Operate.
		{"operate garbage", http.MethodPost, replication.PathOperate, "", []byte("catch up, please")},
		{"operate wrong type", http.MethodPost, replication.PathOperate, "", []byte(`{"op":1}`)},
		{"operate negative epoch", http.MethodPost, replication.PathOperate, "", []byte(`{"op":"failover","epoch":-1}`)},
		{"operate cut", http.MethodPost, replication.PathOperate, "", operateBody[:len(operateBody)-1]},
		// Offset for time.
		{"offset-for-time no ts", http.MethodGet, replication.PathOffsetTime, "topic=t&partition=0", nil},
		{"offset-for-time negative ts", http.MethodGet, replication.PathOffsetTime, "topic=t&partition=0&ts=-1", nil},
		{"offset-for-time ts past int64", http.MethodGet, replication.PathOffsetTime, "topic=t&partition=0&ts=9223372036854775808", nil},
		{"offset-for-time no partition", http.MethodGet, replication.PathOffsetTime, "topic=t&ts=0", nil},
		// Produce.
		{"produce no topic", http.MethodPost, replication.PathProduce, "partition=0", frames(rec(0, "a"))},
		{"produce negative partition", http.MethodPost, replication.PathProduce, "topic=t&partition=-3", frames(rec(0, "a"))},
		{"produce cut frame", http.MethodPost, replication.PathProduce, produceQuery, valid[:len(valid)-2]},
		{"produce garbage", http.MethodPost, replication.PathProduce, produceQuery, []byte{1, 2, 3}},
		// Heartbeat.
		{"heartbeat garbage", http.MethodPost, replication.PathHeartbeat, "", []byte("not json")},
		{"heartbeat wrong type", http.MethodPost, replication.PathHeartbeat, "", []byte(`{"node":"one"}`)},
		{"heartbeat cut", http.MethodPost, replication.PathHeartbeat, "", []byte(`{"node":1,"replicas":[`)},
		{"heartbeat empty", http.MethodPost, replication.PathHeartbeat, "", nil},
		{"heartbeat trailing data", http.MethodPost, replication.PathHeartbeat, "", []byte(`{"node":1} {"node":2}`)},
		// Membership.
		{"membership garbage", http.MethodPost, replication.PathMembership, "", []byte("add node 2")},
		{"membership wrong type", http.MethodPost, replication.PathMembership, "", []byte(`{"op":"add","id":"two"}`)},
		{"membership empty", http.MethodPost, replication.PathMembership, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{}
			n := serve(t, p)
			status, e := raw(t, tt.method, "http://"+n.Addr+tt.path+"?"+tt.query, bytes.NewReader(tt.body))
			if status != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", status)
			}
			if e == nil || e.Code != replication.CodeBadRequest {
				t.Errorf("refusal = %+v, want code %q", e, replication.CodeBadRequest)
			}
			if calls := p.Calls(); len(calls) != 0 {
				t.Errorf("a malformed request reached the peer: %+v", calls)
			}
		})
	}
}

// handler.go, digests: one request asks for at most 4096 chunks (the last
// may be shorter than the others, cluster.DigestsRequest); one chunk more
// is refused with CodeBadRequest, whatever the chunk size, and never
// reaches the peer.
func TestReplicationMalformedDigestsBound(t *testing.T) {
	const most = 4096
	for _, chunk := range []uint64{1, 2, 1000} {
		tests := []struct {
			to     uint64
			chunks uint64
		}{
			{most * chunk, most},
			{(most-1)*chunk + 1, most},
			{most*chunk + 1, most + 1},
			{(most + 1) * chunk, most + 1},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("chunk %d to %d", chunk, tt.to), func(t *testing.T) {
				p := &fakePeer{}
				n := serve(t, p)
				q := fmt.Sprintf("topic=t&partition=0&from=0&to=%d&chunk=%d", tt.to, chunk)
				status, e := raw(t, http.MethodGet, "http://"+n.Addr+replication.PathDigests+"?"+q, nil)
				reached := len(p.Calls()) == 1
				if tt.chunks <= most {
					if status != http.StatusOK || !reached {
						t.Errorf("%d chunks: status %d, refusal %+v, reached the peer %v; want 200", tt.chunks, status, e, reached)
					}
					return
				}
				if status != http.StatusBadRequest || e == nil || e.Code != replication.CodeBadRequest || reached {
					t.Errorf("%d chunks: status %d, refusal %+v, reached the peer %v; want 400 %s", tt.chunks, status, e, reached, replication.CodeBadRequest)
				}
			})
		}
	}
}

// handler.go, NewHandler: only the ten documented routes, each with its one
// method, are served; anything else is a 4xx that never reaches the peer.
func TestReplicationMalformedRoute(t *testing.T) {
	tests := []request{
		{"unknown path", http.MethodPost, "/v1/nope", "", nil},
		{"no version", http.MethodPost, "/replicate", replicateQuery, nil},
		{"trailing slash", http.MethodPost, replication.PathReplicate + "/", replicateQuery, nil},
		{"root", http.MethodGet, "/", "", nil},
		{"get replicate", http.MethodGet, replication.PathReplicate, replicateQuery, nil},
		{"put replicate", http.MethodPut, replication.PathReplicate, replicateQuery, nil},
		{"post records", http.MethodPost, replication.PathRecords, recordsQuery, nil},
		{"delete records", http.MethodDelete, replication.PathRecords, recordsQuery, nil},
		{"get produce", http.MethodGet, replication.PathProduce, produceQuery, nil},
		{"get propose", http.MethodGet, replication.PathPropose, "", nil},
		{"patch heartbeat", http.MethodPatch, replication.PathHeartbeat, "", nil},
		{"post digests", http.MethodPost, replication.PathDigests, digestsQuery, nil},
		{"get cut", http.MethodGet, replication.PathCut, "", nil},
		{"get operate", http.MethodGet, replication.PathOperate, "", nil},
		{"get membership", http.MethodGet, replication.PathMembership, "", nil},
		{"post offset-for-time", http.MethodPost, replication.PathOffsetTime, offsetTimeQuery, nil},
		{"old catch-up", http.MethodPost, "/v1/catch-up", "topic=t&partition=0&follower=2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{}
			n := serve(t, p)
			status, _ := raw(t, tt.method, "http://"+n.Addr+tt.path+"?"+tt.query, bytes.NewReader(tt.body))
			if status < 400 || status > 499 {
				t.Errorf("status = %d, want 4xx", status)
			}
			if calls := p.Calls(); len(calls) != 0 {
				t.Errorf("a request to no route reached the peer: %+v", calls)
			}
		})
	}
}

// frameHeader is the header of a frame at offset whose payload is n bytes,
// so that a body of one huge, otherwise valid frame can be streamed
// without holding it.
func frameHeader(offset uint64, timestamp int64, n int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(log.HeaderSize-4+n))
	b = binary.BigEndian.AppendUint64(b, offset)
	b = binary.BigEndian.AppendUint64(b, uint64(timestamp))
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// handler.go, MaxBodyBytes bounds every request body: one byte more is
// refused even when it is otherwise a well-formed body (one frame), and never
// reaches the peer. Every route reads its body through the same body(), so
// replicate stands for them all: 64 MiB through a handler costs about a
// second under -race.
func TestReplicationMalformedBodyTooLarge(t *testing.T) {
	// The streamed header is the one the frame format writes.
	if got, want := frameHeader(7, 8, 3), log.AppendFrame(nil, log.Record{Offset: 7, Timestamp: 8, Payload: []byte("abc")})[:log.HeaderSize]; !bytes.Equal(got, want) {
		t.Fatalf("frameHeader = %x, want %x", got, want)
	}
	payload := int(replication.MaxBodyBytes) + 1 - log.HeaderSize
	body := io.MultiReader(bytes.NewReader(frameHeader(0, 1, payload)), io.LimitReader(zeros{}, int64(payload)))

	p := &fakePeer{}
	n := serve(t, p)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+n.Addr+replication.PathReplicate+"?"+replicateQuery, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = replication.MaxBodyBytes + 1
	// HTTP/1.1: the limit does not depend on the protocol, and 64 MiB of
	// HTTP/2 frames take twice as long under -race.
	var http1 http.Protocols
	http1.SetHTTP1(true)
	status, e := send(t, &http1, req)
	if status != http.StatusBadRequest || e == nil || e.Code != replication.CodeBadRequest {
		t.Errorf("status %d, refusal %+v; want 400 %s", status, e, replication.CodeBadRequest)
	}
	if calls := p.Calls(); len(calls) != 0 {
		t.Errorf("a body over MaxBodyBytes reached the peer (%d calls)", len(calls))
	}
}
