package cluster

import (
	"fmt"
	"maps"
	"slices"

	"github.com/pystream/pystream/topic"
)

// Assignment is where one partition's replicas live: its leader and its
// followers (ascending). Together they are the partition's assigned brokers.
type Assignment struct {
	Leader    int
	Followers []int
}

// Placement computes the static replica placement of a new topic
// (docs/design.md § Placement): with the brokers sorted by id as B[0..n-1],
// partition p gets leader B[p mod n] and followers B[(p+1) mod n] ...
// B[(p+rf-1) mod n], the followers listed ascending. It is a pure function; the
// cluster calls it once per topic and persists the answer, never recomputing
// it.
//
// brokers must be positive and distinct, partitions at least 1 and
// 1 <= rf <= len(brokers).
func Placement(brokers []int, partitions, rf int) ([]Assignment, error) {
	sorted := slices.Clone(brokers)
	slices.Sort(sorted)
	for i, id := range sorted {
		if id < 1 {
			return nil, fmt.Errorf("cluster: placement: broker id %d: %w", id, ErrInvalidBrokerID)
		}
		if i > 0 && sorted[i-1] == id {
			return nil, fmt.Errorf("cluster: placement: broker id %d listed twice: %w", id, ErrInvalidArgument)
		}
	}
	if partitions < 1 || partitions > topic.MaxPartitionCount {
		return nil, fmt.Errorf("cluster: placement: %d partitions, want 1..%d: %w", partitions, topic.MaxPartitionCount, ErrInvalidPartitionCount)
	}
	n := len(sorted)
	if rf < 1 || rf > n {
		return nil, fmt.Errorf("cluster: placement: replication factor %d with %d broker(s), want 1..%d: %w", rf, n, n, ErrInvalidReplicationFactor)
	}
	out := make([]Assignment, partitions)
	for p := range out {
		followers := make([]int, 0, rf-1)
		for k := 1; k < rf; k++ {
			followers = append(followers, sorted[(p+k)%n])
		}
		slices.Sort(followers)
		out[p] = Assignment{Leader: sorted[p%n], Followers: followers}
	}
	return out, nil
}

// sortedKeys returns a map's int keys ascending.
func sortedKeys[V any](m map[int]V) []int {
	return slices.Sorted(maps.Keys(m))
}
