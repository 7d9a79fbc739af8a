package raftmeta

import (
	"context"
	"fmt"

	"github.com/hashicorp/raft"
)

// Server is one member of the Raft configuration as a node sees it.
type Server struct {
	// ID is the node id; 0 for a member whose Raft id is not a node id.
	ID int
	// Addr is its internal address.
	Addr string
	// Voter is false for a non-voting member (staging or nonvoter).
	Voter bool
	// Leader is true for the member this node takes for the leader.
	Leader bool
}

// AddVoter adds node id at addr as a voter, or updates the address of a
// member that is there already. Leader only. It returns once the new
// configuration has committed; the new node then catches up from the log
// or a snapshot. The new node must have been started with Join.
func (n *Node) AddVoter(ctx context.Context, id int, addr string) error {
	if id < 1 || addr == "" {
		return fmt.Errorf("raftmeta: add voter %d at %q: %w", id, addr, ErrInvalidArgument)
	}
	timeout, err := enqueueTimeout(ctx)
	if err != nil {
		return fmt.Errorf("raftmeta: add voter %d: %w", id, err)
	}
	if err := wait(ctx, n.raft.AddVoter(serverID(id), raft.ServerAddress(addr), 0, timeout)); err != nil {
		return n.failure(fmt.Sprintf("add voter %d", id), err)
	}
	return nil
}

// RemoveVoter removes node id from the configuration. Leader only; it
// returns once the new configuration has committed.
//
// A removed follower is not told: it stops hearing from the leader and
// keeps running, and the voters refuse its election requests as they no
// longer know it. Close it. Removing the leader itself is allowed: it
// commits the change with the others, steps down and shuts its Raft down
// before RemoveVoter returns (its operations then fail with ErrClosed;
// close it still, to release its files), and the rest elect a new leader.
// If ctx ends first and the change commits after, the old leader stays a
// follower outside the configuration, which never stands for election,
// until it is closed. Hashicorp's rules apply: one change at a time, each
// committed by a majority of the configuration before it, so removing a
// member of a cluster that has lost its majority blocks until ctx ends.
func (n *Node) RemoveVoter(ctx context.Context, id int) error {
	if id < 1 {
		return fmt.Errorf("raftmeta: remove voter %d: %w", id, ErrInvalidArgument)
	}
	timeout, err := enqueueTimeout(ctx)
	if err != nil {
		return fmt.Errorf("raftmeta: remove voter %d: %w", id, err)
	}
	if err := wait(ctx, n.raft.RemoveServer(serverID(id), 0, timeout)); err != nil {
		return n.failure(fmt.Sprintf("remove voter %d", id), err)
	}
	if id == n.id {
		// This leader removed itself and stepped down to a follower
		// (ShutdownOnRemove is off: see stopRaft).
		if err := n.stopRaft(); err != nil {
			return fmt.Errorf("raftmeta: remove voter %d: shut down: %w", id, err)
		}
	}
	return nil
}

// Servers returns the latest configuration this node knows, in
// configuration order, which may include a change not yet committed.
func (n *Node) Servers() ([]Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, n.failure("servers", err)
	}
	leaderID, _ := n.Leader()
	conf := f.Configuration()
	out := make([]Server, 0, len(conf.Servers))
	for _, s := range conf.Servers {
		id := nodeID(s.ID)
		out = append(out, Server{
			ID:     id,
			Addr:   string(s.Address),
			Voter:  s.Suffrage == raft.Voter,
			Leader: id != 0 && id == leaderID,
		})
	}
	return out, nil
}
