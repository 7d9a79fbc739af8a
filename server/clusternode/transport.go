package clusternode

import (
	"context"

	"github.com/pystream/pystream/cluster"
)

// netTransport is the node's cluster.Transport: a request to its own
// broker is a function call, one to another broker travels to that
// broker's process over the internal API (server/replication), at the
// internal address the metadata registers for it. Refusals come back as
// the errors the other process returned (replication.DecodeError); a
// process that cannot be reached is an error wrapping
// cluster.ErrBrokerUnavailable.
//
// Every request to another process but an operation's is bounded by the
// call deadline (CallDeadline): a broker that stopped answering without
// closing its connections (paused, cut off by a network that holds the
// bytes) fails the call within it, as unavailable, the same as one whose
// connection closed. An operation (Operate: a failover, a catch-up run on
// the process that must) keeps its own, longer bound: it may copy a
// replica's whole log.
type netTransport struct{ n *Node }

var _ cluster.Transport = netTransport{}

// call sends a request to broker to: local when it is this node's own,
// else over the network to its registered address, within the call
// deadline.
func call[Req, Res any](t netTransport, ctx context.Context, to int, req Req,
	local func(context.Context, int, Req) (Res, error), remote func(context.Context, string, Req) (Res, error)) (Res, error) {
	if to == t.n.cfg.ID {
		return local(ctx, to, req)
	}
	ctx, cancel := context.WithTimeout(ctx, t.n.callDeadline)
	defer cancel()
	return callRemote(t, ctx, to, req, remote)
}

// callRemote sends a request to broker to's process, bounded by ctx
// alone.
func callRemote[Req, Res any](t netTransport, ctx context.Context, to int, req Req, remote func(context.Context, string, Req) (Res, error)) (Res, error) {
	addr, err := t.n.addrOf(to)
	if err != nil {
		var zero Res
		return zero, err
	}
	return remote(ctx, addr, req)
}

func (t netTransport) Replicate(ctx context.Context, to int, req cluster.ReplicateRequest) (cluster.ReplicateResponse, error) {
	return call(t, ctx, to, req, t.n.core.Replicate, t.n.rpc.Replicate)
}

func (t netTransport) Records(ctx context.Context, to int, req cluster.RecordsRequest) (cluster.RecordsResponse, error) {
	return call(t, ctx, to, req, t.n.core.Records, t.n.rpc.Records)
}

func (t netTransport) Digests(ctx context.Context, to int, req cluster.DigestsRequest) (cluster.DigestsResponse, error) {
	return call(t, ctx, to, req, t.n.core.Digests, t.n.rpc.Digests)
}

func (t netTransport) Cut(ctx context.Context, to int, req cluster.CutRequest) (cluster.CutResponse, error) {
	return call(t, ctx, to, req, t.n.core.Cut, t.n.rpc.Cut)
}

func (t netTransport) Produce(ctx context.Context, to int, req cluster.ProduceRequest) (cluster.ProduceResponse, error) {
	return call(t, ctx, to, req, t.n.core.Produce, t.n.rpc.Produce)
}

func (t netTransport) OffsetForTime(ctx context.Context, to int, req cluster.OffsetForTimeRequest) (cluster.OffsetForTimeResponse, error) {
	return call(t, ctx, to, req, t.n.core.OffsetForTimeAt, t.n.rpc.OffsetForTime)
}

func (t netTransport) Operate(ctx context.Context, to int, req cluster.OperateRequest) (cluster.OperateResponse, error) {
	if to == t.n.cfg.ID {
		return t.n.core.Operate(ctx, to, req)
	}
	return callRemote(t, ctx, to, req, t.n.rpc.Operate)
}

// peer is the node as the internal API serves it (replication.Peer): the
// replica transport's requests reach the node's own broker; the metadata
// group's its Raft voter.
type peer struct{ n *Node }

// MaxPayloadSize is the largest payload the node's broker takes.
func (p peer) MaxPayloadSize() int { return p.n.core.MaxPayloadSize() }

func (p peer) Replicate(ctx context.Context, req cluster.ReplicateRequest) (cluster.ReplicateResponse, error) {
	return p.n.core.Replicate(ctx, p.n.cfg.ID, req)
}

func (p peer) Records(ctx context.Context, req cluster.RecordsRequest) (cluster.RecordsResponse, error) {
	return p.n.core.Records(ctx, p.n.cfg.ID, req)
}

func (p peer) Digests(ctx context.Context, req cluster.DigestsRequest) (cluster.DigestsResponse, error) {
	return p.n.core.Digests(ctx, p.n.cfg.ID, req)
}

func (p peer) Cut(ctx context.Context, req cluster.CutRequest) (cluster.CutResponse, error) {
	return p.n.core.Cut(ctx, p.n.cfg.ID, req)
}

func (p peer) Produce(ctx context.Context, req cluster.ProduceRequest) (cluster.ProduceResponse, error) {
	return p.n.core.Produce(ctx, p.n.cfg.ID, req)
}

func (p peer) OffsetForTime(ctx context.Context, req cluster.OffsetForTimeRequest) (cluster.OffsetForTimeResponse, error) {
	return p.n.core.OffsetForTimeAt(ctx, p.n.cfg.ID, req)
}

func (p peer) Operate(ctx context.Context, req cluster.OperateRequest) (cluster.OperateResponse, error) {
	return p.n.core.Operate(ctx, p.n.cfg.ID, req)
}
