package replication_test

import (
	"bytes"
	"math"
	"net/http"
	"testing"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// handler.go, replicate: the records of a replicate request are
// consecutive, from the first one's offset (cluster.ReplicateRequest,
// cluster.Consecutive); the handler refuses any other run with
// CodeBadRequest before the peer sees it. Offsets never wrap: nothing
// follows math.MaxUint64.
func TestReplicationConsecutive(t *testing.T) {
	at := func(offsets ...uint64) []log.Record {
		recs := make([]log.Record, len(offsets))
		for i, o := range offsets {
			recs[i] = rec(o, "p")
		}
		return recs
	}
	tests := []struct {
		name string
		recs []log.Record
		want bool
	}{
		{"none", nil, true},
		{"one", at(7), true},
		{"from zero", at(0, 1, 2), true},
		{"from anywhere", at(41, 42, 43, 44), true},
		{"up to the last offset", at(math.MaxUint64-1, math.MaxUint64), true},
		{"gap", at(1, 2, 4), false},
		{"repeat", at(3, 3), false},
		{"backwards", at(5, 4), false},
		{"wrap", at(math.MaxUint64, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The handler and the replication core agree on the rule.
			if got := cluster.Consecutive(tt.recs); got != tt.want {
				t.Fatalf("cluster.Consecutive = %v, want %v", got, tt.want)
			}
			p := &fakePeer{}
			n := serve(t, p)
			status, e := raw(t, http.MethodPost, "http://"+n.Addr+replication.PathReplicate+"?"+replicateQuery, bytes.NewReader(frames(tt.recs...)))
			if !tt.want {
				if status != http.StatusBadRequest || e == nil || e.Code != replication.CodeBadRequest {
					t.Errorf("status %d, refusal %+v; want 400 %s", status, e, replication.CodeBadRequest)
				}
				if calls := p.Calls(); len(calls) != 0 {
					t.Errorf("records out of order reached the peer: %+v", calls)
				}
				return
			}
			if status != http.StatusOK || e != nil {
				t.Fatalf("status %d, refusal %+v; want 200", status, e)
			}
			if got := onlyCall(t, p, "Replicate").(cluster.ReplicateRequest); !sameRecords(got.Records, tt.recs) {
				t.Errorf("peer got %+v, want %+v", got.Records, tt.recs)
			}
		})
	}
}
