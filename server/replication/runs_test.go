package replication_test

import (
	"bytes"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// Leader-epoch runs on the wire (docs/design.md § Leader-epoch history):
// a leader's write carries its runs in the runs query parameter, a read
// that asks for the replica's history gets it in HeaderEpochRuns, both in
// cluster.FormatEpochRuns' form.

// someRuns is a history with an unknown run, extreme numbers, and runs at
// one epoch.
var someRuns = []cluster.EpochRun{
	{Start: 0},
	{Epoch: 3, ID: 0x9f2c1a0b3d4e5f60, Start: 12},
	{Epoch: 3, ID: 1, Start: 40},
	{Epoch: 1<<64 - 1, ID: 1<<64 - 1, Start: 1<<64 - 2},
}

// ReplicateRequest.Runs reach the peer exactly, none as none.
func TestReplicationRoundTripReplicateRuns(t *testing.T) {
	for _, runs := range [][]cluster.EpochRun{nil, someRuns[1:2], someRuns} {
		t.Run(cluster.FormatEpochRuns(runs), func(t *testing.T) {
			p := &fakePeer{replicate: cluster.ReplicateResponse{End: 45}}
			n := serve(t, p)
			req := cluster.ReplicateRequest{Topic: "orders", Partition: 3, Epoch: 7, Leader: 2, HighWatermark: 40, LogStart: 12,
				Records: []log.Record{{Offset: 44, Timestamp: 1, Payload: []byte("one")}}, Runs: runs}
			if _, err := newClient(t).Replicate(t.Context(), n.Addr, req); err != nil {
				t.Fatal(err)
			}
			got := onlyCall(t, p, "Replicate").(cluster.ReplicateRequest)
			if !reflect.DeepEqual(got.Runs, req.Runs) {
				t.Fatalf("peer got runs %+v, want %+v", got.Runs, req.Runs)
			}
		})
	}
}

// RecordsRequest.Runs reaches the peer, and RecordsResponse.Runs comes
// back exactly; a read that does not ask gets no runs, whatever the peer
// says.
func TestReplicationRoundTripRecordsRuns(t *testing.T) {
	tests := []struct {
		name string
		ask  bool
		runs []cluster.EpochRun
		want []cluster.EpochRun
	}{
		{"asked", true, someRuns, someRuns},
		{"asked, one run", true, someRuns[1:2], someRuns[1:2]},
		{"asked, no history", true, nil, nil},
		{"not asked", false, someRuns, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{records: cluster.RecordsResponse{LogStart: 0, LogEnd: 50, HighWatermark: 45, Runs: tt.runs,
				Records: []log.Record{{Offset: 10, Timestamp: 100, Payload: []byte("x")}}}}
			n := serve(t, p)
			req := cluster.RecordsRequest{Topic: "orders", Partition: 2, From: 10, MaxBytes: 4096, Runs: tt.ask}
			res, err := newClient(t).Records(t.Context(), n.Addr, req)
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyCall(t, p, "Records").(cluster.RecordsRequest); got != req {
				t.Errorf("peer got %+v, want %+v", got, req)
			}
			if !reflect.DeepEqual(res.Runs, tt.want) {
				t.Errorf("runs = %+v, want %+v", res.Runs, tt.want)
			}
			if !sameRecords(res.Records, p.records.Records) || res.LogEnd != 50 || res.HighWatermark != 45 {
				t.Errorf("answer %+v, want %+v", res, p.records)
			}
		})
	}
}

// A runs parameter cluster.ParseEpochRuns refuses is a bad request that
// reaches no Peer method.
func TestReplicationReplicateMalformedRuns(t *testing.T) {
	for _, runs := range []string{
		"x",
		",",
		"3:9f2c1a0b3d4e5f60:12,",
		"3:9f2c1a0b3d4e5f6:12",    // 15 hexadecimal digits
		"3:9f2c1a0b3d4e5f60",      // no start
		"3:9f2c1a0b3d4e5f60:12:1", // a fourth field
		"-3:9f2c1a0b3d4e5f60:12",  // a negative epoch
		"18446744073709551616:9f2c1a0b3d4e5f60:12",                       // epoch past uint64
		"3:9f2c1a0b3d4e5f60:18446744073709551616",                        // start past uint64
		"3:9f2c1a0b3d4e5fzz:12",                                          // not hexadecimal
		"5:0000000000000000:0",                                           // an unknown run with an epoch
		"3:0000000000000001:5,3:0000000000000002:5",                      // starts not ascending
		"3:0000000000000001:5,3:0000000000000002:4",                      // starts descending
		"3:0000000000000001:0,3:0000000000000001:5",                      // one run continued
		"0:0000000000000000:0,0:0000000000000000:5",                      // the unknown run continued
		"4:0000000000000001:0,3:0000000000000002:5",                      // epochs descending
		"3:0000000000000001:0,4:0000000000000002:5,3:0000000000000001:9", // a run twice
	} {
		t.Run(runs, func(t *testing.T) {
			p := &fakePeer{}
			n := serve(t, p)
			u := "http://" + n.Addr + replication.PathReplicate + "?" + replicateQuery + "&runs=" + url.QueryEscape(runs)
			status, e := raw(t, http.MethodPost, u, bytes.NewReader(frames(rec(4, "a"))))
			if status != http.StatusBadRequest || e == nil || e.Code != replication.CodeBadRequest || !strings.Contains(e.Message, "runs") {
				t.Fatalf("answered %d %+v, want %d %s naming runs", status, e, http.StatusBadRequest, replication.CodeBadRequest)
			}
			if calls := p.Calls(); len(calls) != 0 {
				t.Fatalf("the peer saw %+v", calls)
			}
		})
	}
	// The well-formed parameter, for contrast, reaches the peer.
	p := &fakePeer{}
	n := serve(t, p)
	u := "http://" + n.Addr + replication.PathReplicate + "?" + replicateQuery + "&runs=" + url.QueryEscape(cluster.FormatEpochRuns(someRuns[:2]))
	if status, e := raw(t, http.MethodPost, u, bytes.NewReader(frames(rec(12, "a")))); status != http.StatusOK {
		t.Fatalf("answered %d %+v", status, e)
	}
	if got := onlyCall(t, p, "Replicate").(cluster.ReplicateRequest); !reflect.DeepEqual(got.Runs, someRuns[:2]) {
		t.Fatalf("peer got runs %+v", got.Runs)
	}
}

// forgedRuns answers with its header in place of HeaderEpochRuns.
type forgedRuns struct {
	http.ResponseWriter
	header string
	done   bool
}

func (w *forgedRuns) WriteHeader(code int) {
	if !w.done {
		w.done = true
		w.Header().Set(replication.HeaderEpochRuns, w.header)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *forgedRuns) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// An answer whose HeaderEpochRuns cluster.ParseEpochRuns refuses is an
// error for a read that asked for runs, and ignored by one that did not.
func TestReplicationRecordsMalformedRunsAnswer(t *testing.T) {
	for _, header := range []string{"x", "3:9f2c1a0b3d4e5f60:12,", "3:0000000000000001:5,3:0000000000000002:5", "5:0000000000000000:0"} {
		t.Run(header, func(t *testing.T) {
			p := &fakePeer{records: cluster.RecordsResponse{LogEnd: 50, Runs: someRuns}}
			h := replication.NewHandler(p, nil)
			n := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(&forgedRuns{ResponseWriter: w, header: header}, r)
			}))
			c := newClient(t)
			req := cluster.RecordsRequest{Topic: "orders", Partition: 2, From: 10, MaxBytes: 4096, Runs: true}
			res, err := c.Records(t.Context(), n.Addr, req)
			if err == nil {
				t.Fatalf("got %+v, want an error", res)
			}
			if !strings.Contains(err.Error(), n.Addr) {
				t.Errorf("error %v does not name the node", err)
			}
			req.Runs = false
			if _, err := c.Records(t.Context(), n.Addr, req); err != nil {
				t.Fatalf("a read without runs: %v", err)
			}
		})
	}
}
