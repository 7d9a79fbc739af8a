package group

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// tps builds a member's share: tps("a", 0, 1) is partitions 0 and 1 of a.
func tps(topic string, ps ...int32) TopicPartitions {
	return TopicPartitions{Topic: topic, Partitions: ps}
}

func member(id string, topics []string, current ...TopicPartitions) AssignMember {
	return AssignMember{ID: id, Topics: topics, Current: current}
}

var orders = []string{"orders"}

// The assignor's rules (consumer_assign.go): balanced shares, the extra
// places first to members that held more, then to those with the fewest
// partitions so far; previous partitions kept up to the share; the rest
// ascending, in member id order.
func TestConsumerAssignTable(t *testing.T) {
	tests := []struct {
		name       string
		members    []AssignMember
		partitions map[string]int32
		want       map[string][]TopicPartitions
	}{
		{
			name:       "no members",
			partitions: map[string]int32{"orders": 3},
			want:       map[string][]TopicPartitions{},
		},
		{
			name:       "one member takes every partition",
			members:    []AssignMember{member("m1", orders)},
			partitions: map[string]int32{"orders": 3},
			want:       map[string][]TopicPartitions{"m1": {tps("orders", 0, 1, 2)}},
		},
		{
			name:       "fresh group: ranges in id order, whatever the input order",
			members:    []AssignMember{member("m3", orders), member("m1", orders), member("m2", orders)},
			partitions: map[string]int32{"orders": 7},
			want: map[string][]TopicPartitions{
				"m1": {tps("orders", 0, 1, 2)}, "m2": {tps("orders", 3, 4)}, "m3": {tps("orders", 5, 6)}},
		},
		{
			name:       "more members than partitions: the last get nothing",
			members:    []AssignMember{member("m1", orders), member("m2", orders), member("m3", orders)},
			partitions: map[string]int32{"orders": 2},
			want:       map[string][]TopicPartitions{"m1": {tps("orders", 0)}, "m2": {tps("orders", 1)}, "m3": nil},
		},
		{
			name: "a member joins: one partition moves, from the member above the share",
			members: []AssignMember{
				member("m1", orders, tps("orders", 0, 1)), member("m2", orders, tps("orders", 2, 3)), member("m3", orders)},
			partitions: map[string]int32{"orders": 4},
			want: map[string][]TopicPartitions{
				"m1": {tps("orders", 0, 1)}, "m2": {tps("orders", 2)}, "m3": {tps("orders", 3)}},
		},
		{
			name: "a member leaves: its partitions go to the others, nothing else moves",
			members: []AssignMember{
				member("m2", orders, tps("orders", 2)), member("m3", orders, tps("orders", 3))},
			partitions: map[string]int32{"orders": 4},
			want:       map[string][]TopicPartitions{"m2": {tps("orders", 0, 2)}, "m3": {tps("orders", 1, 3)}},
		},
		{
			name: "the extra partition stays with the member that holds it",
			members: []AssignMember{
				member("m1", orders, tps("orders", 0)), member("m2", orders, tps("orders", 1, 2))},
			partitions: map[string]int32{"orders": 3},
			want:       map[string][]TopicPartitions{"m1": {tps("orders", 0)}, "m2": {tps("orders", 1, 2)}},
		},
		{
			name: "extra partitions of several topics spread over the members",
			members: []AssignMember{
				member("m1", []string{"a", "b", "c"}), member("m2", []string{"c", "b", "a"}), member("m3", []string{"a", "b", "c"})},
			partitions: map[string]int32{"a": 1, "b": 1, "c": 1},
			want: map[string][]TopicPartitions{
				"m1": {tps("a", 0)}, "m2": {tps("b", 0)}, "m3": {tps("c", 0)}},
		},
		{
			name: "different subscriptions: each topic over its own subscribers",
			members: []AssignMember{
				member("m1", []string{"a"}), member("m2", []string{"a", "b"}), member("m3", []string{"b"})},
			partitions: map[string]int32{"a": 2, "b": 2},
			want: map[string][]TopicPartitions{
				"m1": {tps("a", 0)}, "m2": {tps("a", 1), tps("b", 0)}, "m3": {tps("b", 1)}},
		},
		{
			name: "unknown topics and vanished partitions are dropped",
			members: []AssignMember{
				member("m1", []string{"orders", "nope"}, tps("orders", 0, 5), tps("gone", 0))},
			partitions: map[string]int32{"orders": 2},
			want:       map[string][]TopicPartitions{"m1": {tps("orders", 0, 1)}},
		},
		{
			name: "a partition claimed twice goes to the lowest id",
			members: []AssignMember{
				member("m1", orders, tps("orders", 0)), member("m2", orders, tps("orders", 0))},
			partitions: map[string]int32{"orders": 2},
			want:       map[string][]TopicPartitions{"m1": {tps("orders", 0)}, "m2": {tps("orders", 1)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Assign(tt.members, tt.partitions)
			require.Equal(t, tt.want, got)
		})
	}
}

// Over many group shapes: every partition of a subscribed topic is
// assigned exactly once, shares differ by at most one per topic, and the
// same input in another order gives the same output.
func TestConsumerAssignInvariants(t *testing.T) {
	for n := 1; n <= 6; n++ {
		for count := int32(0); count <= 13; count++ {
			var ms []AssignMember
			for i := range n {
				ms = append(ms, member(fmt.Sprintf("m%02d", i), orders))
			}
			parts := map[string]int32{"orders": count}
			got := Assign(ms, parts)
			seen := map[int32]string{}
			sizes := []int{}
			for id, share := range got {
				size := 0
				for _, tp := range share {
					for _, p := range tp.Partitions {
						_, dup := seen[p]
						require.False(t, dup, "partition %d twice", p)
						seen[p] = id
						size++
					}
				}
				sizes = append(sizes, size)
			}
			require.Len(t, seen, int(count), "n=%d count=%d", n, count)
			require.LessOrEqual(t, slices.Max(sizes)-slices.Min(sizes), 1)

			// Stickiness: a new member moves at most a share's worth.
			for i := range ms {
				ms[i].Current = got[ms[i].ID]
			}
			slices.Reverse(ms)
			require.Equal(t, got, Assign(ms, parts), "order does not matter")
			after := Assign(append(slices.Clone(ms), member("zz", orders)), parts)
			moved := 0
			for id, share := range got {
				was := map[int32]bool{}
				for _, tp := range share {
					for _, p := range tp.Partitions {
						was[p] = true
					}
				}
				for _, tp := range after[id] {
					for _, p := range tp.Partitions {
						delete(was, p)
					}
				}
				moved += len(was)
			}
			var newShare int
			for _, tp := range after["zz"] {
				newShare += len(tp.Partitions)
			}
			require.Equal(t, newShare, moved, "only what the new member takes moves: %v -> %v", got, after)
		}
	}
}
