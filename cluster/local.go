package cluster

import "context"

// localTransport is the transport of a Cluster of one process: each
// request is a function call to the broker it names, in the same process.
// A broker that is stopped or was never registered answers with an error
// wrapping ErrBrokerUnavailable.
type localTransport struct{ c *Cluster }

var _ Transport = localTransport{}

func (t localTransport) Replicate(ctx context.Context, to int, req ReplicateRequest) (ReplicateResponse, error) {
	return t.c.Replicate(ctx, to, req)
}

func (t localTransport) Records(ctx context.Context, to int, req RecordsRequest) (RecordsResponse, error) {
	return t.c.Records(ctx, to, req)
}

func (t localTransport) Digests(ctx context.Context, to int, req DigestsRequest) (DigestsResponse, error) {
	return t.c.Digests(ctx, to, req)
}

func (t localTransport) Cut(ctx context.Context, to int, req CutRequest) (CutResponse, error) {
	return t.c.Cut(ctx, to, req)
}

func (t localTransport) Produce(ctx context.Context, to int, req ProduceRequest) (ProduceResponse, error) {
	return t.c.Produce(ctx, to, req)
}

func (t localTransport) OffsetForTime(ctx context.Context, to int, req OffsetForTimeRequest) (OffsetForTimeResponse, error) {
	return t.c.OffsetForTimeAt(ctx, to, req)
}

func (t localTransport) Operate(ctx context.Context, to int, req OperateRequest) (OperateResponse, error) {
	return t.c.Operate(ctx, to, req)
}
