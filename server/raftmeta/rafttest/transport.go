package rafttest

import (
	"io"

	"github.com/hashicorp/raft"
)

// transport is the raft.Transport a Network gives a node: hashicorp's
// InmemTransport, whose routes the Network sets, and whose Close takes it
// off the Network as a process exit would. The methods forward to the
// InmemTransport, except that its Connect and Disconnect are not offered:
// the Network alone decides the routes. It is safe for concurrent use.
type transport struct {
	id    int
	net   *Network
	inmem *raft.InmemTransport
}

var (
	_ raft.Transport   = (*transport)(nil)
	_ raft.WithClose   = (*transport)(nil)
	_ raft.WithPreVote = (*transport)(nil)
)

func (t *transport) Consumer() <-chan raft.RPC             { return t.inmem.Consumer() }
func (t *transport) LocalAddr() raft.ServerAddress         { return t.inmem.LocalAddr() }
func (t *transport) SetHeartbeatHandler(cb func(raft.RPC)) { t.inmem.SetHeartbeatHandler(cb) }

func (t *transport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	return t.inmem.AppendEntriesPipeline(id, target)
}

func (t *transport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return t.inmem.AppendEntries(id, target, args, resp)
}

func (t *transport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return t.inmem.RequestVote(id, target, args, resp)
}

func (t *transport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.inmem.RequestPreVote(id, target, args, resp)
}

func (t *transport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	return t.inmem.InstallSnapshot(id, target, args, resp, data)
}

func (t *transport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return t.inmem.TimeoutNow(id, target, args, resp)
}

func (t *transport) EncodePeer(id raft.ServerID, addr raft.ServerAddress) []byte {
	return t.inmem.EncodePeer(id, addr)
}

func (t *transport) DecodePeer(buf []byte) raft.ServerAddress { return t.inmem.DecodePeer(buf) }

// Close takes the transport off its Network: no node reaches it any more,
// and it reaches none, so peers' messages to the node fail at once, as
// they would to a process that exited. Hashicorp's Raft calls it when it
// shuts down. Close may be called more than once.
func (t *transport) Close() error {
	t.net.closed(t)
	return t.inmem.Close()
}
