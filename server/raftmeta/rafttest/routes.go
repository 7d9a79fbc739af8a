package rafttest

import (
	"strconv"
)

// pair is an unordered pair of node ids, smaller first: a link cut both
// ways.
type pair struct{ a, b int }

// pairOf returns the pair of a and b in either order.
func pairOf(a, b int) pair {
	if a > b {
		a, b = b, a
	}
	return pair{a, b}
}

// route is a directed route: from's transport can reach to's.
type route struct{ from, to int }

// reachable reports whether a and b can reach each other, given the cut
// pairs and the isolated nodes. A node does not route to itself: Raft
// never sends to its own address.
func reachable(a, b int, cuts map[pair]bool, isolated map[int]bool) bool {
	return a != b && !isolated[a] && !isolated[b] && !cuts[pairOf(a, b)]
}

// routes returns every directed route among the nodes up, given the cut
// pairs and the isolated nodes.
func routes(up []int, cuts map[pair]bool, isolated map[int]bool) map[route]bool {
	out := make(map[route]bool)
	for _, a := range up {
		for _, b := range up {
			if reachable(a, b, cuts, isolated) {
				out[route{a, b}] = true
			}
		}
	}
	return out
}

// Addr is node id's address on a Network, "node-<id>:7001"; it is the
// same for every transport the node is given, so a restarted node keeps
// it.
func Addr(id int) string { return "node-" + strconv.Itoa(id) + ":7001" }
