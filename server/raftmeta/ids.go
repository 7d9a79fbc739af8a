package raftmeta

import (
	"strconv"

	"github.com/hashicorp/raft"
)

// serverID is the Raft id of node id: its decimal string.
func serverID(id int) raft.ServerID { return raft.ServerID(strconv.Itoa(id)) }

// nodeID parses a Raft id back to a node id; 0 when it is not one of ours
// (empty, not decimal, or below 1).
func nodeID(id raft.ServerID) int {
	n, err := strconv.Atoi(string(id))
	if err != nil || n < 1 || strconv.Itoa(n) != string(id) {
		return 0
	}
	return n
}
