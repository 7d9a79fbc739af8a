package group

import (
	"cmp"
	"maps"
	"slices"
)

// AssignorName is the name consumer groups report for the coordinator's
// assignor (Description.Assignor): balanced like Kafka's server-side
// "uniform" assignor, and sticky.
const AssignorName = "uniform"

// AssignMember is one member of a consumer group as the assignor sees it.
type AssignMember struct {
	ID string
	// Topics is the member's subscription.
	Topics []string
	// Current is the member's share of the group's previous target
	// assignment: the assignor keeps it where balance allows.
	Current []TopicPartitions
}

// Assign is the consumer groups' assignor: a pure function from the
// members (their subscriptions and their share of the previous target)
// and the partition count of each topic to the new target assignment, by
// member id. It is deterministic: the same input gives the same output,
// whatever the order of members or topics in it.
//
// Each topic is balanced over the members subscribed to it, topics in
// ascending name order, members in ascending id order:
//
//  1. With P partitions and n subscribers, every subscriber gets P/n
//     partitions and P%n of them one more. Those extra places go first
//     to subscribers that held more than P/n of the topic before (they
//     keep one more), then to those with the fewest partitions of every
//     topic assigned so far (ties to the lowest id), so that one member
//     does not collect every topic's extra partition.
//  2. Each subscriber keeps the partitions it held before (the lowest
//     first), up to its share.
//  3. The partitions left over go, ascending, to the subscribers below
//     their share, in id order.
//
// A partition therefore moves only when balance needs it: a member
// joining takes one partition from each member above the new share, a
// member leaving hands its partitions to the others. Partitions of a
// topic missing from partitions (or with none) are assigned to nobody; a
// previous share naming a partition the topic no longer has is ignored.
// The result lists every member, those with nothing with a nil slice,
// each member's topics ascending and partitions ascending.
func Assign(members []AssignMember, partitions map[string]int32) map[string][]TopicPartitions {
	ms := slices.Clone(members)
	slices.SortFunc(ms, func(a, b AssignMember) int { return cmp.Compare(a.ID, b.ID) })
	ms = slices.CompactFunc(ms, func(a, b AssignMember) bool { return a.ID == b.ID })

	type key struct {
		topic string
		p     int32
	}
	prev := map[key]string{} // previous owner, the first by id on a clash
	for _, m := range ms {
		for _, tp := range m.Current {
			for _, p := range tp.Partitions {
				if _, ok := prev[key{tp.Topic, p}]; !ok {
					prev[key{tp.Topic, p}] = m.ID
				}
			}
		}
	}
	subscribers := map[string][]int{} // topic -> indexes into ms
	for i, m := range ms {
		for _, t := range sortedUnique(m.Topics) {
			if partitions[t] > 0 {
				subscribers[t] = append(subscribers[t], i)
			}
		}
	}
	total := make([]int, len(ms))
	out := make(map[string][]TopicPartitions, len(ms))
	for _, m := range ms {
		out[m.ID] = nil
	}
	for _, t := range sortedKeys(subscribers) {
		subs, count := subscribers[t], partitions[t]
		n := int32(len(subs))
		base, extra := count/n, count%n

		held := make(map[int][]int32, len(subs)) // member index -> partitions it held
		owner := map[string]int{}
		for _, i := range subs {
			owner[ms[i].ID] = i
		}
		for p := range count {
			if i, ok := owner[prev[key{t, p}]]; ok {
				held[i] = append(held[i], p)
			}
		}
		// Step 1: who gets one more.
		order := slices.Clone(subs)
		slices.SortStableFunc(order, func(a, b int) int {
			ka, kb := int32(len(held[a])) > base, int32(len(held[b])) > base
			switch {
			case ka && !kb:
				return -1
			case kb && !ka:
				return 1
			case ka && kb:
				return cmp.Compare(a, b)
			}
			if c := cmp.Compare(total[a], total[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		share := make(map[int]int32, len(subs))
		for j, i := range order {
			share[i] = base
			if int32(j) < extra {
				share[i]++
			}
		}
		// Step 2: keep.
		got := make(map[int][]int32, len(subs))
		taken := make([]bool, count)
		for _, i := range subs {
			for _, p := range held[i] {
				if int32(len(got[i])) < share[i] {
					got[i] = append(got[i], p)
					taken[p] = true
				}
			}
		}
		// Step 3: hand out the rest.
		next := int32(0)
		for _, i := range subs {
			for int32(len(got[i])) < share[i] {
				for taken[next] {
					next++
				}
				got[i] = append(got[i], next)
				taken[next] = true
			}
		}
		for _, i := range subs {
			ps := got[i]
			slices.Sort(ps)
			total[i] += len(ps)
			if len(ps) > 0 {
				out[ms[i].ID] = append(out[ms[i].ID], TopicPartitions{Topic: t, Partitions: ps})
			}
		}
	}
	return out
}

// sortedUnique returns the distinct strings of s, ascending.
func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// sortedKeys returns the keys of m, ascending.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
