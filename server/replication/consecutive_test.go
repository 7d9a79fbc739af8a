package replication_test

import (
	"math"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// messages.go, ReplicateRequest: records are consecutive, from the first
// one's offset. Offsets never wrap: nothing follows math.MaxUint64.
func TestReplicationConsecutive(t *testing.T) {
	at := func(offsets ...uint64) []log.Record {
		recs := make([]log.Record, len(offsets))
		for i, o := range offsets {
			recs[i].Offset = o
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
			if got := replication.Consecutive(tt.recs); got != tt.want {
				t.Errorf("Consecutive(%v) = %v, want %v", tt.recs, got, tt.want)
			}
		})
	}
}
